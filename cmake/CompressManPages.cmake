# cmake -DSOURCE_DIR=<folder of *.1 pages> -DOUTPUT_DIR=<folder> -P CompressManPages.cmake
# Writes each page gzip-compressed (gzip -9n: no name or time stamp, so the same page gives the same
# bytes), as Debian installs man pages.
find_program(GZIP gzip REQUIRED)
file(REMOVE_RECURSE "${OUTPUT_DIR}")
file(MAKE_DIRECTORY "${OUTPUT_DIR}")
file(GLOB pages "${SOURCE_DIR}/*.1")
foreach(page IN LISTS pages)
  get_filename_component(name "${page}" NAME)
  execute_process(COMMAND "${GZIP}" -9nc "${page}" OUTPUT_FILE "${OUTPUT_DIR}/${name}.gz" RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "gzip ${page}: ${failed}")
  endif()
endforeach()
