# tg_kubedoc: Kubernetes documents without a network - strict JSON and YAML
# into json-c trees, YAML output, and the Tenant decoding (SPEC.md 5, step 1).
add_library(tg_kubedoc STATIC
  ${CMAKE_CURRENT_LIST_DIR}/json.c
  ${CMAKE_CURRENT_LIST_DIR}/yaml.c
  ${CMAKE_CURRENT_LIST_DIR}/base64.c
  ${CMAKE_CURRENT_LIST_DIR}/tenant_json.c
)
target_include_directories(tg_kubedoc PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(tg_kubedoc PUBLIC tg_pki PkgConfig::JSONC PkgConfig::YAML OpenSSL::Crypto)

tg_add_unit_test(test_kube_json SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_json.c LIBS tg_kubedoc)
tg_add_unit_test(test_kube_yaml SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_yaml.c LIBS tg_kubedoc m)
tg_add_unit_test(test_kube_tenant_json SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tenant_json.c
  LIBS tg_kubedoc)

# libFuzzer targets. The sources they exercise (tg_kubedoc's, and tg_pki's
# for the Tenant check) are compiled into each harness, so coverage feedback
# and the sanitizers reach them while the libraries other targets link stay
# plain.
if(TG_FUZZ)
  get_target_property(tg_kubedoc_fuzz_sources tg_kubedoc SOURCES)
  get_target_property(tg_pki_fuzz_sources tg_pki SOURCES)
  get_target_property(tg_pki_dir tg_pki SOURCE_DIR)
  list(TRANSFORM tg_pki_fuzz_sources PREPEND ${tg_pki_dir}/ REGEX "^[^/]")
  find_package(Threads REQUIRED)
  foreach(target fuzz_tenant_doc fuzz_yaml)
    add_executable(${target} ${CMAKE_CURRENT_LIST_DIR}/${target}.c ${tg_kubedoc_fuzz_sources}
      ${tg_pki_fuzz_sources})
    target_include_directories(${target} PRIVATE ${CMAKE_SOURCE_DIR} ${tg_pki_dir})
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined -g)
    target_link_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(${target} PRIVATE PkgConfig::JSONC PkgConfig::YAML OpenSSL::Crypto
      Threads::Threads m)
    # Each run starts from a fresh copy of the committed seeds in the build dir
    # (the source tree is never written); TG_FUZZ_SECONDS bounds it.
    set(work ${CMAKE_CURRENT_BINARY_DIR}/${target}_run)
    add_test(NAME ${target}
      COMMAND sh -c "rm -rf \"$2\" && mkdir -p \"$2/corpus\" \"$2/artifacts\" && cp -R \"$1\"/. \"$2/corpus/\" && exec \"$0\" -max_total_time=\${TG_FUZZ_SECONDS:-30} -max_len=65536 -rss_limit_mb=1024 -timeout=10 -artifact_prefix=\"$2/artifacts/\" -print_final_stats=1 \"$2/corpus\""
              $<TARGET_FILE:${target}> ${CMAKE_CURRENT_LIST_DIR}/fuzz/corpus_tenant ${work})
    set_tests_properties(${target} PROPERTIES LABELS fuzz TIMEOUT 7200)
  endforeach()
endif()
