// liqorender renders Liqo's own Helm chart (deployments/liqo of the pinned module) with Helm's
// chart loader and template engine, without a cluster, so the guard suite installs what Liqo's
// host processes need from the chart itself rather than from hand-typed copies.
//
//	liqorender --chart DIR [--values FILE] [--namespace liqo] [--kube-version v1.36.3]
//
// Output on stdout: every CRD of the chart and its subcharts, then every rendered template, as
// one multi-document YAML stream; each document is preceded by a "# Source: <file>" comment.
// Templates that render to nothing (disabled features) are left out.
package main

import (
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
)

func main() {
	chartDir := flag.String("chart", "", "chart directory (deployments/liqo)")
	valuesFile := flag.String("values", "", "YAML values merged over the chart's values.yaml")
	namespace := flag.String("namespace", "liqo", "release namespace")
	release := flag.String("release", "liqo", "release name")
	kubeVersion := flag.String("kube-version", "v1.36.3", "Kubernetes version the templates see")
	flag.Parse()
	if *chartDir == "" {
		fmt.Fprintln(os.Stderr, "liqorender: --chart is required")
		os.Exit(2)
	}
	out, err := render(*chartDir, *valuesFile, *namespace, *release, *kubeVersion)
	if err != nil {
		fmt.Fprintln(os.Stderr, "liqorender:", err)
		os.Exit(1)
	}
	fmt.Print(out)
}

// render loads the chart, merges the values as `helm install -f` would, and returns the stream.
func render(chartDir, valuesFile, namespace, release, kubeVersion string) (string, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return "", fmt.Errorf("load %s: %w", chartDir, err)
	}
	overrides := map[string]interface{}{}
	if valuesFile != "" {
		if overrides, err = chartutil.ReadValuesFile(valuesFile); err != nil {
			return "", fmt.Errorf("values %s: %w", valuesFile, err)
		}
	}
	// Subchart conditions (liqo-crds, ...) are resolved against the merged values, as install does.
	if err = chartutil.ProcessDependenciesWithMerge(chrt, overrides); err != nil {
		return "", fmt.Errorf("dependencies: %w", err)
	}
	caps := chartutil.DefaultCapabilities.Copy()
	if caps.KubeVersion, err = parseKubeVersion(kubeVersion); err != nil {
		return "", err
	}
	opts := chartutil.ReleaseOptions{Name: release, Namespace: namespace, Revision: 1, IsInstall: true}
	vals, err := chartutil.ToRenderValues(chrt, overrides, opts, caps)
	if err != nil {
		return "", fmt.Errorf("values: %w", err)
	}
	files, err := engine.Render(chrt, vals)
	if err != nil {
		return "", fmt.Errorf("render: %w", err)
	}
	return crds(chrt) + templates(files), nil
}

func parseKubeVersion(v string) (chartutil.KubeVersion, error) {
	var major, minor, patch int
	if _, err := fmt.Sscanf(v, "v%d.%d.%d", &major, &minor, &patch); err != nil {
		return chartutil.KubeVersion{}, fmt.Errorf("--kube-version %q: want vX.Y.Z", v)
	}
	return chartutil.KubeVersion{Version: v, Major: fmt.Sprint(major), Minor: fmt.Sprint(minor)}, nil
}

// crds returns the chart's crds/ files (its subcharts' included) in a stable order.
func crds(chrt *chart.Chart) string {
	objs := chrt.CRDObjects()
	sort.Slice(objs, func(i, j int) bool { return objs[i].Filename < objs[j].Filename })
	var b strings.Builder
	for _, crd := range objs {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", crd.Filename, strings.TrimSpace(string(crd.File.Data)))
	}
	return b.String()
}

// templates returns the rendered manifests in file order, skipping partials, notes and empties.
func templates(files map[string]string) string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		body := strings.TrimSpace(files[name])
		if body == "" || strings.HasSuffix(name, "NOTES.txt") || isOnlyComments(body) {
			continue
		}
		for _, doc := range strings.Split(body, "\n---") {
			doc = strings.TrimSpace(strings.TrimPrefix(doc, "---"))
			if doc != "" && !isOnlyComments(doc) {
				fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", name, doc)
			}
		}
	}
	return b.String()
}

func isOnlyComments(doc string) bool {
	for _, line := range strings.Split(doc, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}
