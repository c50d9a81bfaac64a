# cmake -DINPUT=file -DOUTPUT=file.cpp -DFUNCTION=name -DNAMESPACE=ns -P embed_text.cmake
# Writes a C++ source whose function `ns::name()` returns INPUT's text as a std::string_view.
file(READ "${INPUT}" text)
string(FIND "${text}" ")rdv_embed\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )rdv_embed\"")
endif()
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by embed_text.cmake; do not edit.\n"
  "#include <string_view>\n"
  "namespace ${NAMESPACE} {\n"
  "std::string_view ${FUNCTION}() {\n"
  "  static constexpr char kText[] = R\"rdv_embed(${text})rdv_embed\";\n"
  "  return {kText, sizeof kText - 1};\n"
  "}\n"
  "}  // namespace ${NAMESPACE}\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
