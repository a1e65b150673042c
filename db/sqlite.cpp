// The RAII SQLite layer and its error reporting: every failure names the database file, the call,
// the statement, where in our code it happened, and what SQLite said.
#include "sqlite.hpp"

#include <cctype>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <sqlite3.h>

#include "error.hpp"

namespace sgt::db {

namespace {

std::string_view code_name(int rc) {
  switch (rc & 0xff) {
    case SQLITE_ERROR:
      return "SQLITE_ERROR";
    case SQLITE_PERM:
      return "SQLITE_PERM";
    case SQLITE_BUSY:
      return "SQLITE_BUSY";
    case SQLITE_LOCKED:
      return "SQLITE_LOCKED";
    case SQLITE_NOMEM:
      return "SQLITE_NOMEM";
    case SQLITE_READONLY:
      return "SQLITE_READONLY";
    case SQLITE_IOERR:
      return "SQLITE_IOERR";
    case SQLITE_CORRUPT:
      return "SQLITE_CORRUPT";
    case SQLITE_FULL:
      return "SQLITE_FULL";
    case SQLITE_CANTOPEN:
      return "SQLITE_CANTOPEN";
    case SQLITE_CONSTRAINT:
      return "SQLITE_CONSTRAINT";
    case SQLITE_NOTADB:
      return "SQLITE_NOTADB";
    default:
      return "SQLITE_?";
  }
}

std::string hint(int rc, int busy_timeout_ms) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return fmt::format(
          "; another process held the database's write lock for longer than the busy timeout "
          "({} ms; set SGT_DB_BUSY_TIMEOUT_MS to wait longer)",
          busy_timeout_ms);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return "; the file is damaged or is not an SQLite database, and the failed operation wrote "
             "nothing to it: move it aside (or restore a backup, or `sgemm-tune db import` an "
             "export) and retry";
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return "; the file (or its directory, which holds the -wal and -shm files) is not writable, "
             "or the database was opened read-only";
    case SQLITE_CANTOPEN:
      return "; the file cannot be opened (missing directory or no permission)";
    case SQLITE_FULL:
      return "; the disk is full";
    default:
      return "";
  }
}

// Keeps the last two path components: enough to find the line, without the build machine's
// checkout path.
std::string_view short_file(std::string_view f) {
  auto last = f.rfind('/');
  if (last == std::string_view::npos || last == 0) return f;
  auto prev = f.rfind('/', last - 1);
  return prev == std::string_view::npos ? f : f.substr(prev + 1);
}

std::string one_line(std::string_view sql) {
  std::string out;
  bool space = false;
  for (char ch : sql) {
    if (ch == '\n' || ch == '\t' || ch == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += ch;
  }
  if (out.size() > 90) out = out.substr(0, 87) + "...";
  return out;
}

}  // namespace

namespace {

// file: URI of a path, every byte outside the unreserved set percent-encoded (so '?', '#' and '%'
// in a file name stay part of it).
std::string file_uri(const std::filesystem::path& p, std::string_view query) {
  std::string out = "file:";
  for (const unsigned char ch : std::filesystem::absolute(p).string()) {
    if (std::isalnum(ch) || ch == '/' || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      out += fmt::format("%{:02X}", ch);
    }
  }
  return out + "?" + std::string(query);
}

}  // namespace

Connection::Connection(const std::filesystem::path& path, int flags, int busy_timeout_ms,
                       std::string_view uri_query, std::source_location loc)
    : path_(path), busy_timeout_ms_(busy_timeout_ms) {
  // On failure the handle still exists (it carries the message); check() reads it, then the
  // handle is freed here because a throwing constructor runs no destructor.
  try {
    const std::string name = uri_query.empty() ? path.string() : file_uri(path, uri_query);
    if (!uri_query.empty()) flags |= SQLITE_OPEN_URI;
    check(sqlite3_open_v2(name.c_str(), &db_, flags, nullptr), "sqlite3_open_v2", {}, loc);
    SGT_SQLITE_CHECK(*this, sqlite3_extended_result_codes(db_, 1));
    SGT_SQLITE_CHECK(*this, sqlite3_busy_timeout(db_, busy_timeout_ms));
  } catch (...) {
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
}

Connection::~Connection() {
  if (db_) sqlite3_close_v2(db_);
}

bool Connection::read_only() const {
  return sqlite3_db_readonly(db_, "main") == 1;
}

long long Connection::changes() const {
  return sqlite3_changes64(db_);
}

void Connection::check(int rc, std::string_view call, std::string_view sql,
                       std::source_location loc) const {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  const char* msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  throw Error(fmt::format("tuning database '{}': {}{} failed at {}:{}: {} ({}, code {}){}",
                          path_.string(), call, sql.empty() ? "" : " `" + one_line(sql) + "`",
                          short_file(loc.file_name()), loc.line(), msg, code_name(rc), rc,
                          hint(rc, busy_timeout_ms_)));
}

void Connection::exec_script(std::string_view sql, std::source_location loc) const {
  const char* p = sql.data();
  const char* end = sql.data() + sql.size();
  while (p < end) {
    sqlite3_stmt* st = nullptr;
    const char* tail = nullptr;
    check(sqlite3_prepare_v2(db_, p, static_cast<int>(end - p), &st, &tail), "sqlite3_prepare_v2",
          std::string_view(p, static_cast<size_t>(end - p)), loc);
    if (!st) break;  // only whitespace or comments left
    const std::string_view text(p, static_cast<size_t>(tail - p));
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    }
    sqlite3_finalize(st);
    check(rc, "sqlite3_step", text, loc);
    p = tail;
  }
}

Stmt::Stmt(const Connection& conn, std::string_view sql, std::source_location loc)
    : conn_(conn), sql_(sql) {
  conn_.check(
      sqlite3_prepare_v2(conn_.get(), sql_.data(), static_cast<int>(sql_.size()), &stmt_, nullptr),
      "sqlite3_prepare_v2", sql_, loc);
}

Stmt::~Stmt() {
  sqlite3_finalize(stmt_);
}

Stmt& Stmt::bind(int index, long long v) {
  conn_.check(sqlite3_bind_int64(stmt_, index, v), "sqlite3_bind_int64", sql_);
  return *this;
}

Stmt& Stmt::bind(int index, double v) {
  if (std::isnan(v)) return bind_null(index);
  conn_.check(sqlite3_bind_double(stmt_, index, v), "sqlite3_bind_double", sql_);
  return *this;
}

Stmt& Stmt::bind(int index, std::string_view v) {
  conn_.check(sqlite3_bind_text64(stmt_, index, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
              "sqlite3_bind_text64", sql_);
  return *this;
}

Stmt& Stmt::bind_null(int index) {
  conn_.check(sqlite3_bind_null(stmt_, index), "sqlite3_bind_null", sql_);
  return *this;
}

int Stmt::index_of(const char* name) const {
  const int i = sqlite3_bind_parameter_index(stmt_, name);
  if (i == 0) throw Error(fmt::format("statement has no parameter {}: {}", name, one_line(sql_)));
  return i;
}

bool Stmt::step(std::source_location loc) {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // Reset first so a failed statement does not hold a read lock while the error unwinds.
  sqlite3_reset(stmt_);
  conn_.check(rc, "sqlite3_step", sql_, loc);
  return false;
}

void Stmt::run(std::source_location loc) {
  while (step(loc)) {
  }
  reset();
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
}

bool Stmt::is_null(int col) const {
  return sqlite3_column_type(stmt_, col) == SQLITE_NULL;
}

long long Stmt::int64(int col) const {
  return sqlite3_column_int64(stmt_, col);
}

double Stmt::real(int col) const {
  if (is_null(col)) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(stmt_, col);
}

std::string Stmt::text(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  if (!p) return {};
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, col)));
}

int Stmt::column_count() const {
  return sqlite3_column_count(stmt_);
}

Transaction::Transaction(const Connection& conn, Kind kind, std::source_location loc)
    : conn_(conn) {
  Stmt(conn_, kind == Kind::write ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED", loc).run(loc);
  open_ = true;
}

Transaction::~Transaction() {
  if (!open_) return;
  // Errors cannot be reported from a destructor; a failed rollback leaves SQLite to roll back
  // when the connection closes.
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(conn_.get(), "ROLLBACK", -1, &st, nullptr) == SQLITE_OK) sqlite3_step(st);
  sqlite3_finalize(st);
}

void Transaction::commit(std::source_location loc) {
  Stmt(conn_, "COMMIT", loc).run(loc);
  open_ = false;
}

}  // namespace sgt::db
