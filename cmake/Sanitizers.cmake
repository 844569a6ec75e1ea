if(RINGSMB_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
if(RINGSMB_FUZZ)
  # Instrument everything for coverage; the fuzz targets add -fsanitize=fuzzer to their own link.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
# Invariant checks (common/assert.hpp) run in every sanitizer build, also
# one built with NDEBUG.
if(RINGSMB_SANITIZE OR RINGSMB_FUZZ)
  add_compile_definitions(RINGSMB_ASSERTIONS)
endif()
