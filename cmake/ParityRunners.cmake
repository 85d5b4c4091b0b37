# How runner folders join the build. Every folder under src/runners/ is picked up by a glob, so a
# new runner is one folder and no central CMake edit:
# - a folder with a CMakeLists.txt builds itself (add_subdirectory): its sources are left out of
#   libparity's glob, and it adds what it needs (a peer module, sources behind an option);
# - a folder without one (ref) has its .cpp files compiled into libparity.

# Splits the runner folders under `runners_dir`: sets `subdirs_var` to the folders that have a
# CMakeLists.txt (sorted) and removes their files from the source list named by `sources_var`.
function(parity_split_runner_folders runners_dir subdirs_var sources_var)
  file(GLOB children LIST_DIRECTORIES true CONFIGURE_DEPENDS "${runners_dir}/*")
  list(SORT children)
  set(subdirs)
  set(sources ${${sources_var}})
  foreach(child IN LISTS children)
    if(NOT IS_DIRECTORY "${child}" OR NOT EXISTS "${child}/CMakeLists.txt")
      continue()
    endif()
    list(APPEND subdirs "${child}")
    set(kept)
    foreach(source IN LISTS sources)
      cmake_path(IS_PREFIX child "${source}" NORMALIZE inside)
      if(NOT inside)
        list(APPEND kept "${source}")
      endif()
    endforeach()
    set(sources ${kept})
  endforeach()
  set(${subdirs_var} ${subdirs} PARENT_SCOPE)
  set(${sources_var} ${sources} PARENT_SCOPE)
endfunction()

# A peer runner whose runtime parity must not link (OpenCV, LibTorch): the registration source goes
# into libparity and dlopens libparity_runner_<NAME>.so, built here from SOURCES next to libparity,
# so parity starts (and lists the runner as unavailable) without that runtime installed.
#
#   parity_add_peer_module(NAME opencv
#     OPTION PARITY_WITH_OPENCV DOC "Build ..." HINT "install libopencv-dnn-dev"
#     REQUIRED_VARS PARITY_OPENCV_INCLUDE_DIR PARITY_OPENCV_DNN_LIBRARY ...
#     REGISTRATION opencv_registration.cpp SOURCES opencv_runner.cpp
#     [INCLUDES dirs...] [SYSTEM_INCLUDES dirs...] [LIBS libs...] [COMPILE_OPTIONS options...])
#
# The runtime counts as found when every REQUIRED_VARS variable (find_path / find_library results)
# is set; OPTION (AUTO by default) follows that, and set to ON while the runtime is missing it
# stops the configure with HINT. Relative paths are relative to the calling folder.
function(parity_add_peer_module)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;OPTION;DOC;HINT;REGISTRATION"
    "REQUIRED_VARS;SOURCES;INCLUDES;SYSTEM_INCLUDES;LIBS;COMPILE_OPTIONS")
  foreach(required NAME OPTION DOC REGISTRATION SOURCES)
    if(NOT arg_${required})
      message(FATAL_ERROR "parity_add_peer_module: ${required} is required")
    endif()
  endforeach()
  set(found ON)
  set(missing)
  foreach(var IN LISTS arg_REQUIRED_VARS)
    if(NOT ${var})
      set(found OFF)
      list(APPEND missing ${var})
    endif()
  endforeach()
  # OPTION is AUTO (the default), ON or OFF. AUTO builds the module whenever the runtime is found,
  # at each configure: a tree first configured before `make test` installed the peers (`make`
  # installs only what the demo needs) gets their modules once they are there.
  set(${arg_OPTION} AUTO CACHE STRING "${arg_DOC}: AUTO (when found), ON or OFF")
  set_property(CACHE ${arg_OPTION} PROPERTY STRINGS AUTO ON OFF)
  if("${${arg_OPTION}}" STREQUAL "AUTO")
    set(enabled ${found})
  elseif(${arg_OPTION})
    set(enabled ON)
  else()
    set(enabled OFF)
  endif()
  if(NOT enabled)
    return()
  endif()
  if(NOT found)
    message(FATAL_ERROR "${arg_OPTION} is ON but the ${arg_NAME} runtime was not found (${missing} not found: ${arg_HINT})")
  endif()

  target_sources(parity_lib PRIVATE ${arg_REGISTRATION})
  set(target parity_runner_${arg_NAME})
  add_library(${target} MODULE ${arg_SOURCES})
  target_include_directories(${target} PRIVATE ${arg_INCLUDES})
  if(arg_SYSTEM_INCLUDES)
    target_include_directories(${target} SYSTEM PRIVATE ${arg_SYSTEM_INCLUDES})
  endif()
  target_link_libraries(${target} PRIVATE parity_lib ${arg_LIBS})
  target_compile_options(${target} PRIVATE ${arg_COMPILE_OPTIONS})
  # Next to libparity, where the registration looks for it (build tree and install tree alike).
  set_target_properties(${target} PROPERTIES
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/src
    INSTALL_RPATH "$ORIGIN")
  # Its own install component, packaged as parity-runner-<NAME> (cmake/ParityPackage.cmake).
  install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runner_${arg_NAME})
  set_property(GLOBAL APPEND PROPERTY PARITY_PEER_MODULES ${arg_NAME})
  # `parity` cannot use the runner without its module, so building parity builds the module. The
  # parity target is defined after the runner folders, hence deferred (EVAL expands ${target} now:
  # a deferred call reads variables when it runs).
  cmake_language(EVAL CODE
    "cmake_language(DEFER DIRECTORY \"${PROJECT_SOURCE_DIR}/src\" CALL add_dependencies parity ${target})")
endfunction()
