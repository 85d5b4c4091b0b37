# libonnx: ONNX 1.17's C++ library (IR 10, ai.onnx opset 22), built by scripts/setup.sh from
# Debian's source package into .cache/onnx-<version> (Debian 12 ships only libonnx 1.12: IR 8,
# opset 17). parity's own schemas (src/model/schemas/) cover the opsets after 22, up to ONNX 1.23.
#
# It is built as static, position-independent archives in the C++ namespace `onnx_parity` (protobuf
# package and file names too, the way PyTorch builds its copy as `onnx_torch`), and linked whole
# into libparity only:
# - LibTorch links Debian's libonnx.so.1 (namespace `onnx`), and the torch runner loads it into the
#   same process: a second `onnx` would clash symbol by symbol and register `onnx/onnx-ml.proto`
#   twice in protobuf's descriptor pool, which aborts;
# - one copy, in libparity.so, keeps one schema registry (parity adds its schemas to it) and one set
#   of protobuf descriptors for the CLI, the tests and the runner modules, which use libonnx
#   through libparity's exported symbols.
# `onnx` and `onnx_proto` below are header-only targets (include folder, namespace definitions):
# linking them gives a target the headers, never a second copy of the library.
set(PARITY_ONNX_VERSION 1.17.0)
set(PARITY_ONNX_ROOT "${PROJECT_SOURCE_DIR}/.cache/onnx-${PARITY_ONNX_VERSION}" CACHE PATH
  "ONNX ${PARITY_ONNX_VERSION} as scripts/setup.sh installs it (include/, lib/libonnx.a, lib/libonnx_proto.a)")

set(_parity_onnx_lib "${PARITY_ONNX_ROOT}/lib/libonnx.a")
set(_parity_onnx_proto_lib "${PARITY_ONNX_ROOT}/lib/libonnx_proto.a")
if(NOT EXISTS "${_parity_onnx_lib}" OR NOT EXISTS "${_parity_onnx_proto_lib}"
   OR NOT EXISTS "${PARITY_ONNX_ROOT}/include/onnx/onnx_pb.h")
  message(FATAL_ERROR "ONNX ${PARITY_ONNX_VERSION} is not in ${PARITY_ONNX_ROOT}: run scripts/setup.sh "
    "(it builds ONNX's C++ library from Debian's source package once), or set PARITY_ONNX_ROOT")
endif()

add_library(parity_onnx_headers INTERFACE IMPORTED)
target_include_directories(parity_onnx_headers SYSTEM INTERFACE "${PARITY_ONNX_ROOT}/include")
target_compile_definitions(parity_onnx_headers INTERFACE ONNX_NAMESPACE=onnx_parity ONNX_ML=1)
target_link_libraries(parity_onnx_headers INTERFACE protobuf::libprotobuf)

# The names the rest of the build links (as it did with Debian's ONNXConfig.cmake): headers only.
add_library(onnx INTERFACE IMPORTED)
target_link_libraries(onnx INTERFACE parity_onnx_headers)
add_library(onnx_proto INTERFACE IMPORTED)
target_link_libraries(onnx_proto INTERFACE parity_onnx_headers)

# parity_link_onnx_archives(TARGET): links both archives whole into TARGET (libparity), so every
# libonnx symbol a test, the CLI or a runner module uses is there, once.
add_library(parity_onnx_archive STATIC IMPORTED)
set_target_properties(parity_onnx_archive PROPERTIES IMPORTED_LOCATION "${_parity_onnx_lib}")
add_library(parity_onnx_proto_archive STATIC IMPORTED)
set_target_properties(parity_onnx_proto_archive PROPERTIES IMPORTED_LOCATION "${_parity_onnx_proto_lib}")
function(parity_link_onnx_archives target)
  target_link_libraries(${target} PRIVATE
    "$<LINK_LIBRARY:WHOLE_ARCHIVE,parity_onnx_archive,parity_onnx_proto_archive>" protobuf::libprotobuf)
endfunction()

# parity's code names libonnx's namespace `onnx` (an alias of `onnx_parity`, model/onnx_fwd.h);
# every file that sees libonnx's headers sees the alias.
target_compile_options(parity_onnx_headers INTERFACE "SHELL:-include ${PROJECT_SOURCE_DIR}/include/parity/model/onnx_fwd.h")
