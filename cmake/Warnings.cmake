add_compile_options(-Wall -Wextra -Wno-missing-field-initializers)
# scripts/test (and so CI) builds with RINGSMB_WERROR=ON: a new warning fails
# the run instead of scrolling past.
option(RINGSMB_WERROR "Treat compiler warnings as errors" OFF)
if(RINGSMB_WERROR)
  add_compile_options(-Werror)
endif()
