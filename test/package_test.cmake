# Installs the build in EMBED_BUILD_DIR into a fresh prefix, then configures,
# builds and runs the consumer project against that prefix only.
# Run as: cmake -DEMBED_BUILD_DIR=... -DWORK_DIR=... -DCONSUMER_SOURCE_DIR=...
#               -DCXX_COMPILER=... [-DBUILD_TYPE=...] [-DEXTRA_FLAGS=...] -P package_test.cmake

foreach(required EMBED_BUILD_DIR WORK_DIR CONSUMER_SOURCE_DIR CXX_COMPILER)
  if(NOT DEFINED ${required})
    message(FATAL_ERROR "package_test.cmake needs -D${required}=...")
  endif()
endforeach()
if(NOT BUILD_TYPE)
  set(BUILD_TYPE Release)
endif()

# A fresh prefix each run, so a stale install cannot make the test pass.
set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${prefix} ${consumer_build})

function(run_step description)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${description} failed (${result}): ${ARGN}")
  endif()
endfunction()

run_step("installing the embed build" ${CMAKE_COMMAND} --install ${EMBED_BUILD_DIR} --prefix ${prefix})
run_step("configuring the consumer" ${CMAKE_COMMAND}
  -S ${CONSUMER_SOURCE_DIR} -B ${consumer_build}
  -DCMAKE_PREFIX_PATH=${prefix}
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
  "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
run_step("building the consumer" ${CMAKE_COMMAND} --build ${consumer_build})
run_step("running the consumer" ${consumer_build}/embed_consumer)
