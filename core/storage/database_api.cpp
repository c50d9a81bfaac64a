// The out-of-line parts of the public database API (rendezvous/database.hpp): reading row cells
// and building multi-row inserts. Driver-independent.
#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "rendezvous/database.hpp"

namespace rendezvous {
namespace {

// Like the MySQL client: the leading number of the text, 0 when there is none.
int64_t ParseInt(const std::string& text) {
  errno = 0;
  const long long v = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return static_cast<int64_t>(std::strtoull(text.c_str(), nullptr, 10));
  return v;
}

std::string FormatDouble(double v) {
  std::string s = std::to_string(v);
  // to_string keeps six decimals; trailing zeros say nothing.
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace

const DbRow::Cell& DbRow::At(int column) const {
  if (column < 1 || static_cast<size_t>(column) > cells_.size()) {
    throw std::out_of_range("no column " + std::to_string(column) + " in a row of " +
                            std::to_string(cells_.size()));
  }
  return cells_[static_cast<size_t>(column) - 1];
}

int DbRow::IndexOf(std::string_view name) const {
  if (columns_) {
    for (size_t i = 0; i < columns_->names.size(); ++i) {
      if (columns_->names[i] == name) return static_cast<int>(i) + 1;
    }
  }
  throw std::out_of_range("no column named " + std::string(name) + " in the row");
}

std::optional<int64_t> DbRow::OptInt(int column) const {
  const Cell& c = At(column);
  if (const auto* v = std::get_if<int64_t>(&c)) return *v;
  if (const auto* v = std::get_if<double>(&c)) return static_cast<int64_t>(*v);
  if (const auto* v = std::get_if<std::string>(&c)) return ParseInt(*v);
  return std::nullopt;
}

std::optional<double> DbRow::OptDouble(int column) const {
  const Cell& c = At(column);
  if (const auto* v = std::get_if<double>(&c)) return *v;
  if (const auto* v = std::get_if<int64_t>(&c)) return static_cast<double>(*v);
  if (const auto* v = std::get_if<std::string>(&c)) return std::strtod(v->c_str(), nullptr);
  return std::nullopt;
}

std::optional<bool> DbRow::OptBool(int column) const {
  std::optional<int64_t> v = OptInt(column);
  if (!v) return std::nullopt;
  return *v != 0;
}

std::optional<std::string> DbRow::OptString(int column) const {
  const Cell& c = At(column);
  if (const auto* v = std::get_if<std::string>(&c)) return *v;
  if (const auto* v = std::get_if<int64_t>(&c)) return std::to_string(*v);
  if (const auto* v = std::get_if<double>(&c)) return FormatDouble(*v);
  return std::nullopt;
}

int64_t DbRow::Int(int column) const { return OptInt(column).value_or(0); }
double DbRow::Double(int column) const { return OptDouble(column).value_or(0.0); }
std::string DbRow::String(int column) const { return OptString(column).value_or(std::string()); }

uint64_t DbConnection::InsertRows(std::string_view insert, const std::vector<std::vector<DbValue>>& rows,
                                  std::string_view tail, std::string_view row) {
  if (rows.empty()) return 0;
  const size_t width = rows.front().size();
  if (width == 0) throw std::invalid_argument("InsertRows: a row without values");
  std::string group(row);
  if (group.empty()) {
    group = "(";
    for (size_t i = 0; i < width; ++i) group += i ? ", ?" : "?";
    group += ")";
  } else if (static_cast<size_t>(std::count(group.begin(), group.end(), '?')) != width) {
    throw std::invalid_argument("InsertRows: the row text has not one ? per value");
  }
  std::string sql(insert);
  sql += " VALUES ";
  std::vector<DbValue> values;
  values.reserve(width * rows.size());
  for (size_t r = 0; r < rows.size(); ++r) {
    if (rows[r].size() != width) {
      throw std::invalid_argument("InsertRows: row " + std::to_string(r) + " has " +
                                  std::to_string(rows[r].size()) + " values, the first " + std::to_string(width));
    }
    if (r > 0) sql += ", ";
    sql += group;
    values.insert(values.end(), rows[r].begin(), rows[r].end());
  }
  sql += tail;
  return Exec(sql, values);
}

}  // namespace rendezvous
