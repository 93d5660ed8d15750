{{/* What each mode and role installs (docs/LIQO.md, docs/helm.md). The webhook runs on
     providers, and on standalone consumers for Liqo's rules on their local ResourceSlices;
     beside Liqo a consumer keeps Liqo's own webhook. */}}
{{- define "tg.webhook.enabled" -}}
{{- if or (eq .Values.role "provider") (eq .Values.mode "standalone") }}true{{ end -}}
{{- end -}}

{{/* The webhook runs as pods (not a host process at webhook.url). */}}
{{- define "tg.webhook.pods" -}}
{{- if and (include "tg.webhook.enabled" .) (not .Values.webhook.url) }}true{{ end -}}
{{- end -}}

{{/* guard: Liqo's own controllers do the signer's work, on both sides. replace: only the
     provider runs it; the consumer keeps Liqo's. */}}
{{- define "tg.signer.enabled" -}}
{{- if or (eq .Values.mode "standalone") (and (eq .Values.mode "replace") (eq .Values.role "provider")) }}true{{ end -}}
{{- end -}}

{{- define "tg.signer.controllers" -}}
{{- if .Values.signer.controllers -}}
{{ .Values.signer.controllers }}
{{- else if eq .Values.mode "replace" -}}
nonce,tenant,approver,signer,remoterenew,remoteresourceslice
{{- else if eq .Values.role "consumer" -}}
keys,noncesigner,identity,resourceslice,renew,replicator,authtoken
{{- end -}}
{{- end -}}

{{- define "tg.signer.nonceRotation" -}}
{{- if .Values.signer.nonceRotation -}}
{{ .Values.signer.nonceRotation }}
{{- else if eq .Values.mode "replace" -}}
keep
{{- end -}}
{{- end -}}

{{/* Liqo's controller-manager makes Liqo's tenant namespaces: it gets the labeler verb. */}}
{{- define "tg.liqo" -}}
{{- if ne .Values.mode "standalone" }}true{{ end -}}
{{- end -}}

{{- define "tg.auth.enabled" -}}
{{- if and .Values.auth.enabled (eq .Values.role "provider") }}true{{ end -}}
{{- end -}}

{{/* registry/repository:tag@digest; the tag defaults to the chart's appVersion. */}}
{{- define "tg.image" -}}
{{- $img := index .root.Values.images .name -}}
{{- $ref := printf "%s:%s" $img.repository ($img.tag | default .root.Chart.AppVersion) -}}
{{- if .root.Values.images.registry }}{{ $ref = printf "%s/%s" .root.Values.images.registry $ref }}{{ end -}}
{{- if $img.digest }}{{ $ref = printf "%s@%s" $ref $img.digest }}{{ end -}}
{{ $ref }}
{{- end -}}

{{- define "tg.podCommon" -}}
{{- with .root.Values.images.pullSecrets }}
imagePullSecrets:
{{- range . }}
  - name: {{ . }}
{{- end }}
{{- end }}
{{- with .root.Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The caBundle of both webhook configurations: the value, or (source=secret, no value)
     what is live, so an upgrade keeps what certs/tenantgate-certs --apply wrote; the Job
     source also keeps the live one (the Job rewrites it before the webhook needs it). */}}
{{- define "tg.caBundle" -}}
{{- if .root.Values.certs.caBundle -}}
{{ .root.Values.certs.caBundle }}
{{- else if ne .root.Values.certs.source "cert-manager" -}}
{{- $live := lookup "admissionregistration.k8s.io/v1" .kind "tenantgate" "" -}}
{{- if $live }}{{ range $live.webhooks }}{{ if and (eq .name $.hook) .clientConfig.caBundle }}{{ .clientConfig.caBundle }}{{ end }}{{ end }}{{ end -}}
{{- end -}}
{{- end -}}

{{/* clientConfig, failurePolicy, timeout and selectors of one webhook (.hook its name, .path
     its path, .kind the configuration's kind). */}}
{{- define "tg.webhook.client" -}}
clientConfig:
  {{- if .root.Values.webhook.url }}
  url: {{ printf "%s%s" .root.Values.webhook.url .path }}
  {{- else }}
  service:
    name: tenantgate-webhook
    namespace: {{ .root.Release.Namespace }}
    path: {{ .path }}
    port: 443
  {{- end }}
  {{- with include "tg.caBundle" . }}
  caBundle: {{ . }}
  {{- end }}
{{- with .root.Values.webhook.namespaceSelector }}
namespaceSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .root.Values.webhook.objectSelector }}
objectSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{- define "tg.webhook.policy" -}}
failurePolicy: {{ .Values.webhook.failurePolicy }}
sideEffects: None
{{- end -}}

{{/* The Secrets the certificate Job keeps (certs.source=job), quoted and comma-separated. */}}
{{- define "tg.certs.jobSecrets" -}}
{{ .Values.certs.secretName | quote }}, "tenantgate-webhook-ca"
{{- if include "tg.auth.enabled" . }}, {{ .Values.certs.auth.secretName | quote }}{{ end }}
{{- end }}
