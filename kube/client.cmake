# tg_kube: the Kubernetes API client, kubeconfig and in-cluster configuration,
# the watch stream parser and the informers. Two builds of it, one per API
# client behind kube/client.h:
#   tg_kube    - libcurl multi on libuv (client_curl.c): HTTP/2, proxies, gzip;
#                the signer, the CLI and the tools
#   tg_kube_h1 - HTTP/1.1 over OpenSSL on libuv (client_h1.c): the webhook,
#                which only lists and watches and so does not load libcurl
#                and the libraries it brings (about 1.1 MB resident)
set(TG_KUBE_COMMON_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/backoff.c
  ${CMAKE_CURRENT_LIST_DIR}/cache.c
  ${CMAKE_CURRENT_LIST_DIR}/client_shared.c
  ${CMAKE_CURRENT_LIST_DIR}/clusterid.c
  ${CMAKE_CURRENT_LIST_DIR}/informer.c
  ${CMAKE_CURRENT_LIST_DIR}/kubeconfig.c
  ${CMAKE_CURRENT_LIST_DIR}/watch.c
  ${CMAKE_CURRENT_LIST_DIR}/whoami.c
)
find_package(Threads REQUIRED)
add_library(tg_kube STATIC ${TG_KUBE_COMMON_SOURCES} ${CMAKE_CURRENT_LIST_DIR}/client_curl.c)
target_include_directories(tg_kube PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(tg_kube PUBLIC tg_kubedoc tg_common PkgConfig::CURL PkgConfig::UV PkgConfig::JSONC
  OpenSSL::Crypto Threads::Threads)

add_library(tg_kube_h1 STATIC ${TG_KUBE_COMMON_SOURCES} ${CMAKE_CURRENT_LIST_DIR}/client_h1.c
  ${CMAKE_CURRENT_LIST_DIR}/h1_response.c)
target_include_directories(tg_kube_h1 PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(tg_kube_h1 PUBLIC tg_kubedoc tg_common PkgConfig::H2O PkgConfig::UV PkgConfig::JSONC
  OpenSSL::SSL OpenSSL::Crypto Threads::Threads)

tg_add_unit_test(test_kube_watch SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_watch.c LIBS tg_kube)
tg_add_unit_test(test_kube_kubeconfig SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_kubeconfig.c LIBS tg_kube)
tg_add_unit_test(test_kube_cache SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cache.c LIBS tg_kube)
tg_add_unit_test(test_kube_backoff SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_backoff.c LIBS tg_kube)
tg_add_unit_test(test_kube_clusterid SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_clusterid.c LIBS tg_kube)
tg_add_unit_test(test_kube_whoami SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_whoami.c LIBS tg_kube)
# The client's contract, once per client.
tg_add_unit_test(test_kube_client SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_client.c LIBS tg_kube)
tg_add_unit_test(test_kube_client_h1 SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_client.c LIBS tg_kube_h1)
tg_add_unit_test(test_kube_client_h1_tls SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_client_h1.c LIBS tg_kube_h1)
tg_add_unit_test(test_kube_h1_response SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_h1_response.c LIBS tg_kube_h1)

# The probe the e2e test drives against a real API server (not installed).
add_executable(tg-kube-probe ${CMAKE_CURRENT_LIST_DIR}/probe.c)
target_link_libraries(tg-kube-probe PRIVATE tg_kube)

# libFuzzer targets for the parsers that read what the network or a user
# hands us. As in doc.cmake, the sources under test (ours and tg_kubedoc's,
# which parses the JSON and YAML) are compiled into each harness so coverage
# feedback and the sanitizers reach them, while the libraries stay plain.
if(TG_FUZZ)
  foreach(what watch kubeconfig)
    tg_add_fuzz_target(fuzz_kube_${what} SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_${what}.c
      ${CMAKE_CURRENT_LIST_DIR}/cache.c ${CMAKE_CURRENT_LIST_DIR}/kubeconfig.c
      ${CMAKE_CURRENT_LIST_DIR}/watch.c ${CMAKE_SOURCE_DIR}/common/strtab.c
      UNDER_TEST tg_kubedoc tg_pki CORPUS ${CMAKE_CURRENT_LIST_DIR}/fuzz/${what})
  endforeach()
  # The HTTP/1.1 response reader the webhook's client runs on every byte
  # from the API server (seeds: fuzz/make_h1_corpus.py).
  tg_add_fuzz_target(fuzz_kube_h1_response SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_h1_response.c
    ${CMAKE_CURRENT_LIST_DIR}/h1_response.c CORPUS ${CMAKE_CURRENT_LIST_DIR}/fuzz/h1_response)
  target_link_libraries(fuzz_kube_h1_response PRIVATE PkgConfig::H2O)
endif()
