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

if(FABTOP_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# Give every target's sources the repository root on the include path so that
# headers are included as "topology/topo_model.h", "engine/hist.h", ...
include_directories(${PROJECT_SOURCE_DIR})
