# Shader build: GLSL compute shaders in shaders/ are compiled to SPIR-V with glslc at build time
# and embedded into the engine library as byte arrays (nothing is looked up at run time).
#
#   z123_shader(NAME <variant> SOURCE <file.comp> [DEFINES A=1 B] [REQUIRES <feature>]
#               [TARGET_ENV vulkan1.2|vulkan1.3])
#
# One GLSL source can yield many variants through DEFINES (no copy-pasted kernels). REQUIRES names
# a compiler feature found by z123_probe_glsl_features(); a variant whose feature the compiler
# lacks is not built and the run-time lookup reports it absent. glslc writes a depfile, so editing
# an #included file rebuilds every variant that includes it.

set(Z123_GLSLC "" CACHE STRING
    "glslc command (may be a wrapper script); empty: the system's glslc, or the newer one that \
scripts/fetch-glslc-trixie.sh puts in .toolchain/ when the system's lacks KHR cooperative matrices")

# Whether `glslc` compiles cmake/probes/<feature>.comp.
function(z123_glslc_accepts glslc feature out_var)
  set(probe_dir ${CMAKE_BINARY_DIR}/glsl-probe)
  file(MAKE_DIRECTORY ${probe_dir})
  execute_process(
    COMMAND ${glslc} --target-env=vulkan1.3 -o ${probe_dir}/${feature}.spv ${CMAKE_SOURCE_DIR}/cmake/probes/${feature}.comp
    RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    set(${out_var} ON PARENT_SCOPE)
  else()
    set(${out_var} OFF PARENT_SCOPE)
  endif()
endfunction()

set(Z123_GLSLC_TRIXIE ${CMAKE_SOURCE_DIR}/.toolchain/glslc-trixie/glslc)
if(Z123_GLSLC)
  set(Z123_GLSLC_COMMAND ${Z123_GLSLC})
else()
  # The engine prefers the KHR cooperative-matrix kernels wherever a device has them; a glslc
  # that cannot compile them (Debian 12's) would silently cost ~20% of the speed. The newer
  # glslc fetched by scripts/install-deps.sh (scripts/fetch-glslc-trixie.sh) is then used.
  find_program(Z123_GLSLC_FOUND glslc)
  set(Z123_GLSLC_COMMAND ${Z123_GLSLC_FOUND})
  if(Z123_GLSLC_FOUND)
    z123_glslc_accepts(${Z123_GLSLC_FOUND} KHR_COOPMAT system_khr)
  endif()
  if((NOT Z123_GLSLC_FOUND OR NOT system_khr) AND EXISTS ${Z123_GLSLC_TRIXIE})
    z123_glslc_accepts(${Z123_GLSLC_TRIXIE} KHR_COOPMAT trixie_khr)
    if(trixie_khr)
      message(STATUS "glslc: the system's lacks GL_KHR_cooperative_matrix; using ${Z123_GLSLC_TRIXIE}")
      set(Z123_GLSLC_COMMAND ${Z123_GLSLC_TRIXIE})
    endif()
  endif()
  if(NOT Z123_GLSLC_COMMAND)
    message(FATAL_ERROR "glslc not found: run scripts/install-deps.sh (Debian/Ubuntu package glslc)")
  endif()
endif()

set(Z123_SHADER_DIR ${CMAKE_SOURCE_DIR}/shaders)
set(Z123_SPV_DIR ${CMAKE_BINARY_DIR}/spv)
file(MAKE_DIRECTORY ${Z123_SPV_DIR})
set_property(GLOBAL PROPERTY Z123_SHADER_NAMES "")
set_property(GLOBAL PROPERTY Z123_SHADER_SOURCES "")

# Configure-time feature test: which cooperative-matrix GLSL extensions does this glslc accept?
function(z123_probe_glsl_features)
  foreach(feature NV_COOPMAT KHR_COOPMAT NV_COOPMAT2)
    z123_glslc_accepts(${Z123_GLSLC_COMMAND} ${feature} accepted)
    set(Z123_GLSL_${feature} ${accepted} CACHE INTERNAL "")
    message(STATUS "glslc accepts ${feature}: ${accepted}")
  endforeach()
  if(NOT Z123_GLSL_KHR_COOPMAT)
    message(WARNING "${Z123_GLSLC_COMMAND} cannot compile the KHR cooperative-matrix kernels the engine "
                    "prefers on GPUs that have them; run scripts/install-deps.sh (it fetches a newer glslc "
                    "where needed) or see docs/newer-glslc.md. test_shader_variants fails on this build.")
  endif()
endfunction()

# z123_shader(NAME n SOURCE file.comp [DEFINES ...] [REQUIRES feature] [TARGET_ENV env] [BENCH])
# BENCH: a variant that only a measuring knob picks, built with Z123_BENCH_VARIANTS=ON only.
function(z123_shader)
  cmake_parse_arguments(S "BENCH" "NAME;SOURCE;REQUIRES;TARGET_ENV" "DEFINES" ${ARGN})
  # Every declared variant is listed, built or not, so a test can tell which ones a build lacks
  # and the engine can say why one is missing.
  set(bench 0)
  if(S_BENCH)
    set(bench 1)
  endif()
  set_property(GLOBAL APPEND PROPERTY Z123_DECLARED_SHADERS "${S_NAME}:${S_REQUIRES}:${bench}")
  if(S_REQUIRES AND NOT Z123_GLSL_${S_REQUIRES})
    return()
  endif()
  if(S_BENCH AND NOT Z123_BENCH_VARIANTS)
    return()
  endif()
  if(NOT S_TARGET_ENV)
    set(S_TARGET_ENV vulkan1.2)
  endif()
  set(src ${Z123_SHADER_DIR}/${S_SOURCE})
  set(spv ${Z123_SPV_DIR}/${S_NAME}.spv)
  set(cpp ${Z123_SPV_DIR}/${S_NAME}.spv.cpp)
  set(defs "")
  foreach(d ${S_DEFINES})
    list(APPEND defs -D${d})
  endforeach()
  string(MAKE_C_IDENTIFIER ${S_NAME} ident)
  add_custom_command(
    OUTPUT ${spv}
    COMMAND ${Z123_GLSLC_COMMAND} --target-env=${S_TARGET_ENV} -O -fshader-stage=compute
            -I ${Z123_SHADER_DIR} ${defs} -MD -MF ${spv}.d -o ${spv} ${src}
    DEPENDS ${src}
    DEPFILE ${spv}.d
    COMMENT "glslc ${S_NAME}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${cpp}
    COMMAND ${CMAKE_COMMAND} -DSPV=${spv} -DOUT=${cpp} -DIDENT=${ident}
            -P ${CMAKE_SOURCE_DIR}/cmake/EmbedSpirv.cmake
    DEPENDS ${spv} ${CMAKE_SOURCE_DIR}/cmake/EmbedSpirv.cmake
    VERBATIM)
  set_property(GLOBAL APPEND PROPERTY Z123_SHADER_NAMES ${S_NAME})
  set_property(GLOBAL APPEND PROPERTY Z123_SHADER_SOURCES ${cpp})
endfunction()

# Writes the table that maps variant names to the embedded words; adds all sources to TARGET.
function(z123_embed_shaders target)
  get_property(names GLOBAL PROPERTY Z123_SHADER_NAMES)
  get_property(sources GLOBAL PROPERTY Z123_SHADER_SOURCES)
  get_property(declared GLOBAL PROPERTY Z123_DECLARED_SHADERS)
  set(declared_rows "")
  set(declared_names "")
  foreach(d ${declared})
    string(REPLACE ":" ";" parts "${d}")
    list(GET parts 0 dname)
    list(GET parts 1 dfeature)
    list(GET parts 2 dbench)
    if(dbench)
      set(dbench true)
    else()
      set(dbench false)
    endif()
    string(APPEND declared_rows "    {\"${dname}\", \"${dfeature}\", ${dbench}},\n")
    string(APPEND declared_names "    \"${dname}\",\n")
  endforeach()
  set(decls "")
  set(rows "")
  foreach(n ${names})
    string(MAKE_C_IDENTIFIER ${n} ident)
    string(APPEND decls "extern const unsigned char z123_spv_${ident}[];\nextern const unsigned long z123_spv_${ident}_size;\n")
    string(APPEND rows "    {\"${n}\", z123_spv_${ident}, z123_spv_${ident}_size},\n")
  endforeach()
  if(Z123_BENCH_VARIANTS)
    set(bench_built true)
  else()
    set(bench_built false)
  endif()
  set(table ${Z123_SPV_DIR}/shader_table.cpp)
  file(CONFIGURE OUTPUT ${table} CONTENT
"// Generated by cmake/Shaders.cmake: the table of embedded SPIR-V variants.
#include \"vk/shader_table.hpp\"
${decls}
namespace z123::vk {
const EmbeddedShader kEmbeddedShaders[] = {
${rows}    {nullptr, nullptr, 0},
};
const DeclaredShader kDeclaredShaders[] = {
${declared_rows}    {nullptr, nullptr, false},
};
const bool kBenchVariantsBuilt = ${bench_built};
} // namespace z123::vk
")
  # The declared names again as constants, so that kernels/shader_names.hpp can check the variant
  # names written in the C++ sources at compile time. Rewritten only when the list changes.
  file(CONFIGURE OUTPUT ${Z123_SPV_DIR}/include/z123_declared_shaders.hpp CONTENT
"// Generated by cmake/Shaders.cmake: the name of every variant shaders/variants/*.cmake declares.
#pragma once

#include <string_view>

namespace z123::vk::generated {
inline constexpr std::string_view kDeclaredShaderNames[] = {
${declared_names}};
} // namespace z123::vk::generated
")
  target_include_directories(${target} PUBLIC $<BUILD_INTERFACE:${Z123_SPV_DIR}/include>)
  target_sources(${target} PRIVATE ${table} ${sources})
  target_compile_definitions(${target} PUBLIC
    Z123_GLSL_NV_COOPMAT=$<BOOL:${Z123_GLSL_NV_COOPMAT}>
    Z123_GLSL_KHR_COOPMAT=$<BOOL:${Z123_GLSL_KHR_COOPMAT}>
    Z123_GLSL_NV_COOPMAT2=$<BOOL:${Z123_GLSL_NV_COOPMAT2}>)
endfunction()
