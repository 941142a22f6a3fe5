# symmem-bench's arguments (ctest bench_arguments, host tier): a bad one is refused with exit code 2
# and a message naming it, before any GPU is looked for; --help prints the usage, exit code 0.
#   cmake -DBENCH=<symmem-bench> -P arguments.cmake
function(expect code pattern)
  string(JOIN " " args ${ARGN})
  execute_process(COMMAND ${BENCH} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  if(NOT rc STREQUAL "${code}" OR NOT "${out}${err}" MATCHES "${pattern}")
    message(FATAL_ERROR "symmem-bench ${args}: want exit code ${code} and '${pattern}', got ${rc}:\n${out}${err}")
  endif()
  message(STATUS "symmem-bench ${args}: exit code ${rc} as expected")
endfunction()

expect(0 "usage: symmem-bench" --help)
expect(2 "unknown argument 'bogus'" bogus)
expect(2 "-b needs a value" -b)
expect(2 "-b must not exceed -e" -b 1M -e 4K)
expect(2 "-n=0 is out of range" -n 0)
expect(2 "--replays=-3 is out of range" --replays -3)
expect(2 "unknown dtype 'float128'" -d float128)
expect(2 "unknown reduction 'median'" all_reduce -o median)
# Outputs whose directory is missing: refused before the run (found out after it before).
expect(2 "--json '/nonexistent-dir/x.json': its directory '/nonexistent-dir' is missing" --json /nonexistent-dir/x.json)
expect(2 "--svg '/nonexistent-dir/p.svg': its directory" p2p --svg /nonexistent-dir/p.svg)
expect(2 "--svg 'nonexistent-dir/x.svg': its directory 'nonexistent-dir' is missing" --svg nonexistent-dir/x.svg)
expect(2 "--table '/nonexistent-dir/t.txt'" tune --table /nonexistent-dir/t.txt)
