// Checks of values that come from outside (request bodies, query strings, the command line):
// bounded lengths, valid UTF-8, no control characters, and the 400 that names the field at fault.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "rendezvous/status.hpp"

namespace rendezvous::bookings {

// A rejected field: Status::Invalid naming `field` as the client wrote it ("title",
// "locations[1].link", "attendees[0].email", "body" for the request body as a whole), with a
// message that names it too ("title must be a string", "the request body must be a JSON object").
// `problem` is what is wrong, without the field's name.
Status FieldInvalid(const std::string& field, const std::string& problem);

// "" when `text` is valid UTF-8 of at most `max_chars` code points without control characters
// (tab and line breaks allowed when `multiline`); else what is wrong, without the field name.
std::string CheckText(std::string_view text, size_t max_chars, bool multiline);
// (E-mail addresses: text::IsEmailAddress, the one rule of the host and the plugins.)

// Ok when `body` is a JSON object whose members are all in `allowed`; else the 400 naming the
// first other member (as "<prefix>.<member>" when `prefix` is given, the object itself as
// `prefix`, or "body" at the top).
Status OnlyMembers(const nlohmann::json& body, std::initializer_list<const char*> allowed,
                   const std::string& prefix = "");
// Whether `body` has the member `name` with a value other than null.
bool Present(const nlohmann::json& body, const char* name);

// The query parameter `name`; nullopt when absent. Callers refuse repeated parameters first
// (RefuseRepeated).
std::optional<std::string> QueryParam(const std::multimap<std::string, std::string>& query, const char* name);
// The 400 for the first of `names` given more than once; Ok otherwise.
Status RefuseRepeated(const std::multimap<std::string, std::string>& query,
                      std::initializer_list<const char*> names);
// A date-time query parameter: an unencoded "+" of a zone offset arrives as a space (form
// decoding) and is read as "+".
std::optional<std::string> QueryTimeParam(const std::multimap<std::string, std::string>& query,
                                          const char* name);

}  // namespace rendezvous::bookings
