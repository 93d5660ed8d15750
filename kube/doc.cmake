# tg_kubedoc: Kubernetes documents without a network - strict JSON and YAML
# into json-c trees, YAML output, and the Tenant decoding (PROTOCOL.md 5, step 1).
add_library(tg_kubedoc STATIC
  ${CMAKE_CURRENT_LIST_DIR}/errbuf.c
  ${CMAKE_CURRENT_LIST_DIR}/json.c
  ${CMAKE_CURRENT_LIST_DIR}/yaml.c
  ${CMAKE_CURRENT_LIST_DIR}/base64.c
  ${CMAKE_CURRENT_LIST_DIR}/secret_data.c
  ${CMAKE_CURRENT_LIST_DIR}/tenant_json.c
)
target_include_directories(tg_kubedoc PUBLIC ${CMAKE_SOURCE_DIR})
target_link_libraries(tg_kubedoc PUBLIC tg_pki PkgConfig::JSONC PkgConfig::YAML OpenSSL::Crypto)

tg_add_unit_test(test_kube_json SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_json.c LIBS tg_kubedoc)
tg_add_unit_test(test_kube_secret_data SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_secret_data.c LIBS tg_kubedoc)
tg_add_unit_test(test_kube_yaml SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_yaml.c LIBS tg_kubedoc m)
tg_add_unit_test(test_kube_tenant_json SOURCES ${CMAKE_CURRENT_LIST_DIR}/test_tenant_json.c
  LIBS tg_kubedoc)

# libFuzzer targets. The sources they exercise (tg_kubedoc's, and tg_pki's
# for the Tenant check) are compiled into each harness, so coverage feedback
# and the sanitizers reach them while the libraries other targets link stay
# plain.
if(TG_FUZZ)
  foreach(target fuzz_tenant_doc fuzz_yaml)
    tg_add_fuzz_target(${target} SOURCES ${CMAKE_CURRENT_LIST_DIR}/${target}.c
      UNDER_TEST tg_kubedoc tg_pki CORPUS ${CMAKE_CURRENT_LIST_DIR}/fuzz/corpus_tenant)
  endforeach()
endif()
