# Shared CMake pieces: the OpenBLAS imported target, warning flags, and attn_add_chapter().

# Debian's OpenBLASConfig.cmake sets variables, not a target; wrap them once.
if(NOT TARGET attn::openblas)
  add_library(attn::openblas INTERFACE IMPORTED)
  set_target_properties(attn::openblas PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${OpenBLAS_INCLUDE_DIRS}"
    INTERFACE_LINK_LIBRARIES "${OpenBLAS_LIBRARIES}")
endif()

# Warnings are PRIVATE to our own targets (never forced on users of the library).
add_library(attn_warnings INTERFACE)
target_compile_options(attn_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-unused-parameter>)

# ccache and precompiled headers get along only with these sloppiness settings.
if(CMAKE_CXX_COMPILER_LAUNCHER MATCHES "ccache$")
  set(CMAKE_CXX_COMPILER_LAUNCHER ${CMAKE_COMMAND} -E env
      "CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime"
      ${CMAKE_CXX_COMPILER_LAUNCHER})
endif()

# attn_add_chapter(NN_topic): build chapters/NN_topic/main.cpp as build/bin/NN_topic, and, when
# the folder has exercises, two small libraries: attn_exNN_solutions (solutions.cpp) and
# attn_exNN_learner (exercises.cpp, the learner's file). tests/exercises links one or the other.
function(attn_add_chapter folder)
  string(SUBSTRING "${folder}" 0 2 num)
  set(dir ${CMAKE_CURRENT_SOURCE_DIR}/${folder})
  add_executable(ch${num} ${dir}/main.cpp)
  set_target_properties(ch${num} PROPERTIES OUTPUT_NAME ${folder})
  target_include_directories(ch${num} PRIVATE ${dir})
  target_link_libraries(ch${num} PRIVATE attn::core attn_warnings)
  if(EXISTS ${dir}/exercises.cpp)
    foreach(kind solutions learner)
      if(kind STREQUAL "solutions")
        set(src ${dir}/solutions.cpp)
      else()
        set(src ${dir}/exercises.cpp)
      endif()
      add_library(attn_ex${num}_${kind} STATIC ${src})
      # Tests include "NN_topic/exercises.hpp": every chapter's header has the same file name.
      target_include_directories(attn_ex${num}_${kind} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR} PRIVATE ${dir})
      target_link_libraries(attn_ex${num}_${kind} PUBLIC attn::core PRIVATE attn_warnings)
    endforeach()
    set_property(GLOBAL APPEND PROPERTY ATTN_EXERCISE_CHAPTERS ${num})
  endif()
  set_property(GLOBAL APPEND PROPERTY ATTN_CHAPTER_TARGETS ch${num})
endfunction()
