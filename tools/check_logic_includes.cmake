# Plugin logic classes know nothing of HTTP or the plugin API: no plugin source or header other
# than the wiring files (nor the core identity classes listed below) may include
# rendezvous/http.hpp or rendezvous/plugin.hpp, directly or through the project's own headers.
# Wiring files: *_plugin.cpp, *_routes.*, *_pages.*, *_page.*, *_page_views.*,
# *_page_templates.hpp, *_endpoint.*, route_support.hpp.
# Run: cmake -DSOURCE_DIR=<repo> -P tools/check_logic_includes.cmake (exits non-zero on a breach).
cmake_minimum_required(VERSION 3.20)
if(NOT SOURCE_DIR)
  get_filename_component(SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()
set(forbidden
  "${SOURCE_DIR}/core/include/rendezvous/http.hpp"
  "${SOURCE_DIR}/core/include/rendezvous/plugin.hpp")
set(wiring_regex
  "(_plugin\\.cpp|_routes\\.(hpp|cpp)|_pages?\\.(hpp|cpp)|_page_views\\.(hpp|cpp)|_page_templates\\.hpp|_endpoint\\.(hpp|cpp)|/route_support\\.hpp)$")

# The project headers a file includes, resolved as the compiler does: next to the file, then the
# host's public include folder, then the core's folder (the core's own "area/file.hpp"); system
# headers resolve to none and are skipped. Sets <out> to the list of absolute paths.
function(direct_includes file out)
  file(STRINGS "${file}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
  get_filename_component(dir "${file}" DIRECTORY)
  set(found)
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">].*$" "\\1" name "${line}")
    foreach(base "${dir}" "${SOURCE_DIR}/core/include" "${SOURCE_DIR}/core")
      if(EXISTS "${base}/${name}")
        get_filename_component(path "${base}/${name}" ABSOLUTE)
        list(APPEND found "${path}")
        break()
      endif()
    endforeach()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

file(GLOB plugin_files "${SOURCE_DIR}/plugins/*/*.hpp" "${SOURCE_DIR}/plugins/*/*.cpp")
list(SORT plugin_files)
# The core's own logic classes held to the same rule (the identity stores and services that the
# routes, pages and bearer resolvers wrap).
foreach(f verified_resources.hpp verified_resources.cpp verified_codes.hpp verified_codes.cpp
          user_store.hpp user_store.cpp session_store.hpp session_store.cpp)
  list(APPEND plugin_files "${SOURCE_DIR}/core/identity/${f}")
endforeach()
set(breaches 0)
set(checked 0)
foreach(start IN LISTS plugin_files)
  if(start MATCHES "${wiring_regex}")
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  # Breadth-first over the include graph; via_<n> remembers who included each header first, so a
  # breach prints its whole chain.
  set(queue "${start}")
  set(seen "${start}")
  set(hit "")
  while(queue AND NOT hit)
    list(POP_FRONT queue current)
    direct_includes("${current}" next)
    foreach(n IN LISTS next)
      if(n IN_LIST seen)
        continue()
      endif()
      list(APPEND seen "${n}")
      string(MAKE_C_IDENTIFIER "${n}" key)
      set(via_${key} "${current}")
      if(n IN_LIST forbidden)
        set(hit "${n}")
        break()
      endif()
      list(APPEND queue "${n}")
    endforeach()
  endwhile()
  if(hit)
    math(EXPR breaches "${breaches} + 1")
    set(chain "")
    set(node "${hit}")
    while(NOT node STREQUAL start)
      file(RELATIVE_PATH rel "${SOURCE_DIR}" "${node}")
      set(chain " -> ${rel}${chain}")
      string(MAKE_C_IDENTIFIER "${node}" key)
      set(node "${via_${key}}")
    endwhile()
    file(RELATIVE_PATH rel "${SOURCE_DIR}" "${start}")
    message("logic file sees the HTTP or plugin API: ${rel}${chain}")
  endif()
  # Forget this walk's chain before the next file.
  foreach(n IN LISTS seen)
    string(MAKE_C_IDENTIFIER "${n}" key)
    unset(via_${key})
  endforeach()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no logic files found under ${SOURCE_DIR}/plugins")
endif()
if(breaches GREATER 0)
  message(FATAL_ERROR "${breaches} of ${checked} logic files include rendezvous/http.hpp or rendezvous/plugin.hpp")
endif()
message("${checked} logic files, none includes rendezvous/http.hpp or rendezvous/plugin.hpp")
