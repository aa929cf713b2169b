# Warning and sanitizer flags, added only when the compiler accepts them.
include(CheckCCompilerFlag)

set(FABTOP_WARNINGS
  -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2
  -Wwrite-strings -Wold-style-definition -Wundef -Wvla -Wno-format-nonliteral
  -Wno-format-truncation)

foreach(flag ${FABTOP_WARNINGS})
  string(MAKE_C_IDENTIFIER "HAVE_C${flag}" var)
  check_c_compiler_flag(${flag} ${var})
  if(${var})
    add_compile_options(${flag})
  endif()
endforeach()

if(FABTOP_WERROR)
  add_compile_options(-Werror)
endif()

# GCC's -fsanitize=undefined leaves out float-cast-overflow (a double out of the range of
# the integer it is converted to; clang's includes it): name it, and make every report fatal.
set(FABTOP_SANITIZERS -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer
    -fno-sanitize-recover=undefined,float-cast-overflow)
if(FABTOP_SANITIZE)
  add_compile_options(${FABTOP_SANITIZERS})
  add_link_options(-fsanitize=address,undefined,float-cast-overflow)
endif()

# libFuzzer (tests/fuzz): every library is built with the sanitizers and the fuzzer's
# coverage instrumentation (fuzzer-no-link); only the fuzz targets link libFuzzer itself.
if(FABTOP_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "FABTOP_FUZZ=ON needs clang (libFuzzer is clang's): configure a new "
                        "build directory with CC=clang (this one uses ${CMAKE_C_COMPILER_ID})")
  endif()
  add_compile_options(${FABTOP_SANITIZERS} -fsanitize=fuzzer-no-link)
  add_link_options(-fsanitize=address,undefined,float-cast-overflow)
endif()

# Give every target's sources the repository root on the include path so that
# headers are included as "topology/topo_model.h", "engine/flow/hist.h", ...
include_directories(${PROJECT_SOURCE_DIR})

# fabtop_tree_data(VAR PATH): VAR is PATH, a folder of the source tree that programs run from
# the build tree read shipped files from (common/datadir.h), when FABTOP_BUILD_TREE_DATA is
# ON; "" when OFF, so a packaged binary holds no path of the tree it was built in.
function(fabtop_tree_data var path)
  if(FABTOP_BUILD_TREE_DATA)
    set(${var} "${path}" PARENT_SCOPE)
  else()
    set(${var} "" PARENT_SCOPE)
  endif()
endfunction()
