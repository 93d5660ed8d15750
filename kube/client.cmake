# tg_kube: the Kubernetes API client (libcurl multi on libuv), kubeconfig and
# in-cluster configuration, the watch stream parser and the informers.
add_library(tg_kube STATIC
  ${CMAKE_CURRENT_LIST_DIR}/backoff.c
  ${CMAKE_CURRENT_LIST_DIR}/cache.c
  ${CMAKE_CURRENT_LIST_DIR}/client.c
  ${CMAKE_CURRENT_LIST_DIR}/client_shared.c
  ${CMAKE_CURRENT_LIST_DIR}/clusterid.c
  ${CMAKE_CURRENT_LIST_DIR}/informer.c
  ${CMAKE_CURRENT_LIST_DIR}/kubeconfig.c
  ${CMAKE_CURRENT_LIST_DIR}/watch.c
  ${CMAKE_CURRENT_LIST_DIR}/whoami.c
)
target_include_directories(tg_kube PUBLIC ${CMAKE_SOURCE_DIR})
find_package(Threads REQUIRED)
target_link_libraries(tg_kube PUBLIC tg_kubedoc PkgConfig::CURL PkgConfig::UV PkgConfig::JSONC
  OpenSSL::Crypto Threads::Threads)

tg_add_unit_test(test_kube_watch SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_watch.c LIBS tg_kube)
tg_add_unit_test(test_kube_kubeconfig SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_kubeconfig.c LIBS tg_kube)
tg_add_unit_test(test_kube_cache SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cache.c LIBS tg_kube)
tg_add_unit_test(test_kube_backoff SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_backoff.c LIBS tg_kube)
tg_add_unit_test(test_kube_clusterid SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_clusterid.c LIBS tg_kube)
tg_add_unit_test(test_kube_whoami SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_whoami.c LIBS tg_kube)
tg_add_unit_test(test_kube_client SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_client.c LIBS tg_kube)

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
      ${CMAKE_CURRENT_LIST_DIR}/watch.c
      UNDER_TEST tg_kubedoc tg_pki CORPUS ${CMAKE_CURRENT_LIST_DIR}/fuzz/${what})
  endforeach()
endif()
