# tg_kube: the Kubernetes API client (libcurl multi on libuv), kubeconfig and
# in-cluster configuration, the watch stream parser and the informers.
add_library(tg_kube STATIC
  ${CMAKE_CURRENT_LIST_DIR}/backoff.c
  ${CMAKE_CURRENT_LIST_DIR}/cache.c
  ${CMAKE_CURRENT_LIST_DIR}/client.c
  ${CMAKE_CURRENT_LIST_DIR}/informer.c
  ${CMAKE_CURRENT_LIST_DIR}/kubeconfig.c
  ${CMAKE_CURRENT_LIST_DIR}/watch.c
)
target_include_directories(tg_kube PUBLIC ${CMAKE_SOURCE_DIR})
find_package(Threads REQUIRED)
target_link_libraries(tg_kube PUBLIC tg_kubedoc PkgConfig::CURL PkgConfig::UV PkgConfig::JSONC
  OpenSSL::Crypto Threads::Threads)

tg_add_unit_test(test_kube_watch SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_watch.c LIBS tg_kube)
tg_add_unit_test(test_kube_kubeconfig SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_kubeconfig.c LIBS tg_kube)
tg_add_unit_test(test_kube_cache SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_cache.c LIBS tg_kube)
tg_add_unit_test(test_kube_backoff SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_backoff.c LIBS tg_kube)
tg_add_unit_test(test_kube_client SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_client.c LIBS tg_kube)

# The probe the e2e test drives against a real API server (not installed).
add_executable(tg-kube-probe ${CMAKE_CURRENT_LIST_DIR}/probe.c)
target_link_libraries(tg-kube-probe PRIVATE tg_kube)

# libFuzzer targets for the parsers that read what the network or a user
# hands us. As in doc.cmake, the sources under test (ours and tg_kubedoc's,
# which parses the JSON and YAML) are compiled into each harness so coverage
# feedback and the sanitizers reach them, while the libraries stay plain.
if(TG_FUZZ)
  get_target_property(tg_kube_fuzz_doc_sources tg_kubedoc SOURCES)
  get_target_property(tg_kube_fuzz_pki_sources tg_pki SOURCES)
  get_target_property(tg_kube_fuzz_pki_dir tg_pki SOURCE_DIR)
  list(TRANSFORM tg_kube_fuzz_pki_sources PREPEND ${tg_kube_fuzz_pki_dir}/ REGEX "^[^/]")
  set(tg_kube_fuzz_sources
    ${CMAKE_CURRENT_LIST_DIR}/cache.c
    ${CMAKE_CURRENT_LIST_DIR}/kubeconfig.c
    ${CMAKE_CURRENT_LIST_DIR}/watch.c)
  foreach(what watch kubeconfig)
    set(target fuzz_kube_${what})
    add_executable(${target} ${CMAKE_CURRENT_LIST_DIR}/fuzz_${what}.c ${tg_kube_fuzz_sources}
      ${tg_kube_fuzz_doc_sources} ${tg_kube_fuzz_pki_sources})
    target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR} ${tg_kube_fuzz_pki_dir})
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined -g)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(${target} PRIVATE PkgConfig::JSONC PkgConfig::YAML OpenSSL::Crypto
      Threads::Threads m)
    # Each run starts from a fresh copy of the seeds in the repo (the source
    # tree is never written); TG_FUZZ_SECONDS bounds it.
    set(work ${CMAKE_CURRENT_BINARY_DIR}/${target}_run)
    add_test(NAME ${target}
      COMMAND sh -c "rm -rf \"$2\" && mkdir -p \"$2/corpus\" \"$2/artifacts\" && cp -R \"$1\"/. \"$2/corpus/\" && exec \"$0\" -max_total_time=\${TG_FUZZ_SECONDS:-30} -max_len=65536 -rss_limit_mb=2048 -timeout=10 -artifact_prefix=\"$2/artifacts/\" -print_final_stats=1 \"$2/corpus\""
              $<TARGET_FILE:${target}> ${CMAKE_CURRENT_LIST_DIR}/fuzz/${what} ${work})
    set_tests_properties(${target} PROPERTIES LABELS fuzz TIMEOUT 7200)
  endforeach()
endif()
