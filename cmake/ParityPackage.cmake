# `make package`: Debian packages of what `cmake --install` installs (CPack's DEB generator):
# - parity: the CLI, libparity with its ONNX Runtime runner (ORT itself is loaded at run time), the
#   headers and CMake package for find_package(parity), a man page per command, bash completion and
#   the extension folder;
# - parity-onnxruntime: the ONNX Runtime library the --ort runner loads (from setup.sh's download);
# - parity-runner-<name>: each peer runner module (OpenCV, LibTorch) on its own, so that installing
#   parity does not pull those large runtimes in; without its package a runner is listed as
#   unavailable, as in a build without that runtime.
# Each package's library dependencies come from dpkg-shlibdeps (dpkg-dev) run on its binaries.
get_property(PARITY_PACKAGED_PEER_MODULES GLOBAL PROPERTY PARITY_PEER_MODULES)
set(parity_recommends)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME parity)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "parity")
set(CPACK_PACKAGE_CONTACT "parity developers <parity@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Debug, validate and package deep-learning models across inference runtimes")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The runner modules link libparity.so.0, which is in the parity package rather than on the system:
# dpkg-shlibdeps finds it in the build tree (their dependency on parity is declared below).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${PROJECT_BINARY_DIR}/src)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)

set(CPACK_COMPONENTS_ALL parity)
set(CPACK_DEBIAN_PARITY_PACKAGE_NAME parity)
set(CPACK_COMPONENT_PARITY_DESCRIPTION
  "parity runs ONNX models with its own executor and with ONNX Runtime, compares their outputs\n"
  "layer by layer, and inspects, edits, reduces and packages models: Polygraphy's and Triton\n"
  "Model Navigator's jobs, without Python.")
set(suggested)
foreach(name IN LISTS PARITY_PACKAGED_PEER_MODULES)
  string(TOUPPER "runner_${name}" component)
  list(APPEND CPACK_COMPONENTS_ALL runner_${name})
  set(CPACK_DEBIAN_${component}_PACKAGE_NAME parity-runner-${name})
  set(CPACK_DEBIAN_${component}_PACKAGE_DEPENDS "parity (= ${PROJECT_VERSION})")
  set(CPACK_COMPONENT_${component}_DESCRIPTION "The ${name} runner of parity (--${name}), with the runtime it needs.")
  list(APPEND suggested parity-runner-${name})
endforeach()
# ONNX Runtime itself (not in Debian): the library setup.sh fetched, where the --ort runner of an
# installed parity looks first. parity works without it (--ort is then listed as unavailable).
get_property(PARITY_ORT_BUNDLED_VERSION GLOBAL PROPERTY PARITY_ORT_BUNDLED_VERSION)
if(PARITY_ORT_BUNDLED_VERSION)
  list(APPEND CPACK_COMPONENTS_ALL onnxruntime)
  set(CPACK_DEBIAN_ONNXRUNTIME_PACKAGE_NAME parity-onnxruntime)
  set(CPACK_DEBIAN_ONNXRUNTIME_PACKAGE_SECTION science)
  set(CPACK_COMPONENT_ONNXRUNTIME_DESCRIPTION
    "ONNX Runtime ${PARITY_ORT_BUNDLED_VERSION} (libonnxruntime.so.1, linux-x64) for parity's --ort runner,\n"
    "installed in parity's own library folder rather than on the system's library path.")
  list(APPEND parity_recommends parity-onnxruntime)
endif()
list(JOIN suggested ", " CPACK_DEBIAN_PARITY_PACKAGE_SUGGESTS)
# The Python package (python/), built for Debian's interpreter; it needs numpy (python3-torch only
# for parity.navigator.torch).
if(TARGET parity_python_module)
  list(APPEND parity_recommends "python3 (>= ${PARITY_PYTHON_VERSION})" python3-numpy)
endif()
list(JOIN parity_recommends ", " CPACK_DEBIAN_PARITY_PACKAGE_RECOMMENDS)

include(CPack)
