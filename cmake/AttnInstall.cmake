# `cmake --install build --prefix DIR`: the chapter programs, the tour and the tools go to DIR/bin,
# the shipped data/ (checkpoints, goldens) to DIR/share/attention_step_by_step/data, where the
# programs look for it next to themselves (attn/data/data_files.hpp). The static core library and
# the tests are not installed.
include(GNUInstallDirs)
get_property(attn_install_targets GLOBAL PROPERTY ATTN_CHAPTER_TARGETS)
foreach(t attn-tour attn-bleu)
  if(TARGET ${t})
    list(APPEND attn_install_targets ${t})
  endif()
endforeach()
install(TARGETS ${attn_install_targets} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/data/ DESTINATION ${CMAKE_INSTALL_DATADIR}/attention_step_by_step/data
        PATTERN "*.py" EXCLUDE)
# The compiled translations (attn/present/i18n.hpp), beside the data: DIR/share/attention_step_by_step/locale.
install(DIRECTORY ${CMAKE_BINARY_DIR}/locale/ DESTINATION ${CMAKE_INSTALL_DATADIR}/attention_step_by_step/locale
        OPTIONAL)
