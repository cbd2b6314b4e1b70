# Builds and runs the consumer project the way a user would, one of two ways:
# - with EMBED_BUILD_DIR: installs that build into a fresh prefix and lets the
#   consumer find_package(embed) in that prefix only;
# - with EMBED_SOURCE_DIR: the consumer takes embed's sources by add_subdirectory.
#   With EMBED_PREBUILT_LIBRARY too, the subproject links that libembed.a (the
#   suite's own build of it) instead of compiling the library once more.
# Run as: cmake (-DEMBED_BUILD_DIR=... | -DEMBED_SOURCE_DIR=... [-DEMBED_PREBUILT_LIBRARY=...]) -DWORK_DIR=...
#               -DCONSUMER_SOURCE_DIR=... -DCXX_COMPILER=... [-DBUILD_TYPE=...] [-DEXTRA_FLAGS=...] -P package_test.cmake

if(NOT DEFINED EMBED_BUILD_DIR AND NOT DEFINED EMBED_SOURCE_DIR)
  message(FATAL_ERROR "package_test.cmake needs -DEMBED_BUILD_DIR=... or -DEMBED_SOURCE_DIR=...")
endif()
foreach(required WORK_DIR CONSUMER_SOURCE_DIR CXX_COMPILER)
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

if(DEFINED EMBED_SOURCE_DIR)
  set(how_to_find_embed -DEMBED_SOURCE_DIR=${EMBED_SOURCE_DIR})
  if(EMBED_PREBUILT_LIBRARY)
    list(APPEND how_to_find_embed -DEMBED_PREBUILT_LIBRARY=${EMBED_PREBUILT_LIBRARY})
  endif()
else()
  run_step("installing the embed build" ${CMAKE_COMMAND} --install ${EMBED_BUILD_DIR} --prefix ${prefix})
  set(how_to_find_embed -DCMAKE_PREFIX_PATH=${prefix})
endif()
run_step("configuring the consumer" ${CMAKE_COMMAND}
  -S ${CONSUMER_SOURCE_DIR} -B ${consumer_build}
  ${how_to_find_embed}
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
  "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}"
  "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_FLAGS}")
run_step("building the consumer" ${CMAKE_COMMAND} --build ${consumer_build} -j2)
run_step("running the consumer" ${consumer_build}/embed_consumer)
