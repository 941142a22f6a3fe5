# ctest entry `package`: install this build into a fresh prefix, build tests/package/consumer against
# it with find_package(symmem), run it, and run the installed symmem-run from that prefix.
# Needs -DBUILD=<build dir> -DSRC=<source dir> -DWORK=<scratch dir>.
file(REMOVE_RECURSE ${WORK})
foreach(step
    "${CMAKE_COMMAND};--install;${BUILD};--prefix;${WORK}/prefix"
    "${CMAKE_COMMAND};-S;${SRC}/tests/package/consumer;-B;${WORK}/consumer;-DCMAKE_PREFIX_PATH=${WORK}/prefix;-DCMAKE_BUILD_TYPE=Release"
    "${CMAKE_COMMAND};--build;${WORK}/consumer"
    "${WORK}/consumer/consumer"
    "${WORK}/prefix/bin/symmem-run;-n;2;true")
  execute_process(COMMAND ${step} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package check failed at: ${step}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endforeach()
