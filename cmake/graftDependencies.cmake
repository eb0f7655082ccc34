# What graft::graft links, shared by CMakeLists.txt and the installed graftConfig.cmake.
# shaderc (GLSL -> SPIR-V, runtime/spirv.hpp) must be linked as the recipe of reference/toolchain.md §1:
#   shaderc_combined + glslang + SPIRV + SPIRV-Tools, in that order (static archives).
# libshaderc.so is underlinked and segfaults when mixed with the static glslang, so it is never used.
# libvulkan is NOT linked: runtime/vulkan.hpp dlopens it.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
foreach(_graft_pc shaderc_combined glslang SPIRV-Tools)
  string(MAKE_C_IDENTIFIER "graft_${_graft_pc}" _graft_prefix)
  if(NOT TARGET PkgConfig::${_graft_prefix})
    pkg_check_modules(${_graft_prefix} REQUIRED IMPORTED_TARGET ${_graft_pc})
  endif()
endforeach()
# glslang's SPIR-V back end (libSPIRV.a) has no .pc file.
if(NOT TARGET graft::glslang_SPIRV)
  find_library(GRAFT_SPIRV_LIBRARY SPIRV HINTS ${graft_glslang_LIBRARY_DIRS})
  if(NOT GRAFT_SPIRV_LIBRARY)
    message(FATAL_ERROR "graft: libSPIRV (glslang's SPIR-V back end, Debian: glslang-dev) not found")
  endif()
  add_library(graft::glslang_SPIRV UNKNOWN IMPORTED)
  set_target_properties(graft::glslang_SPIRV PROPERTIES IMPORTED_LOCATION "${GRAFT_SPIRV_LIBRARY}")
endif()
# In link order.
set(GRAFT_DEPENDENCY_TARGETS Threads::Threads PkgConfig::graft_shaderc_combined PkgConfig::graft_glslang
    graft::glslang_SPIRV PkgConfig::graft_SPIRV_Tools)
