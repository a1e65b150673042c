// A thin RAII layer over the SQLite C API: one connection, prepared statements with bound values,
// IMMEDIATE transactions, and one check that turns a failing call into an sgt::Error with evidence.
#pragma once

#include <cstdint>
#include <filesystem>
#include <source_location>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace sgt::db {

class Connection {
 public:
  // flags: SQLITE_OPEN_* (the caller decides read-only or read-write and whether to create).
  // uri_query, when given, opens the file as a URI with these parameters (e.g. "immutable=1").
  Connection(const std::filesystem::path& path, int flags, int busy_timeout_ms,
             std::string_view uri_query = {},
             std::source_location loc = std::source_location::current());
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  sqlite3* get() const { return db_; }
  const std::filesystem::path& path() const { return path_; }
  int busy_timeout_ms() const { return busy_timeout_ms_; }
  // True when SQLite could only open the file for reading (OS permissions or SQLITE_OPEN_READONLY).
  bool read_only() const;
  long long changes() const;

  // Throws sgt::Error unless rc is SQLITE_OK, SQLITE_ROW or SQLITE_DONE. The message names the
  // database file, the SQL call and statement, the caller's file:line and sqlite3_errmsg, plus a
  // hint for the failures users can act on (locked, corrupt, read-only).
  void check(int rc, std::string_view call, std::string_view sql = {},
             std::source_location loc = std::source_location::current()) const;

  // Runs a constant script (schema DDL, pragmas) statement by statement. Never for values: those go
  // through Stmt::bind.
  void exec_script(std::string_view sql,
                   std::source_location loc = std::source_location::current()) const;

 private:
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
  int busy_timeout_ms_ = 0;
};

// Reports the call text of an SQLite C function, e.g. SGT_SQLITE_CHECK(conn, sqlite3_...(...)).
#define SGT_SQLITE_CHECK(conn, call) (conn).check((call), #call)

// A prepared statement. Values are bound, never formatted into SQL. Parameters are :named.
class Stmt {
 public:
  Stmt(const Connection& conn, std::string_view sql,
       std::source_location loc = std::source_location::current());
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  // 1-based positional binds.
  Stmt& bind(int index, long long v);
  Stmt& bind(int index, int v) { return bind(index, static_cast<long long>(v)); }
  Stmt& bind(int index, bool v) { return bind(index, static_cast<long long>(v)); }
  Stmt& bind(int index, double v);  // NaN is stored as NULL, which reads back as NaN
  Stmt& bind(int index, std::string_view v);
  Stmt& bind(int index, const std::string& v) { return bind(index, std::string_view(v)); }
  Stmt& bind(int index, const char* v) { return bind(index, std::string_view(v)); }
  Stmt& bind_null(int index);
  // Named binds (":name"); throws if the statement has no such parameter.
  template <class T>
  Stmt& bind(const char* name, const T& v) {
    return bind(index_of(name), v);
  }
  Stmt& bind_null(const char* name) { return bind_null(index_of(name)); }
  int index_of(const char* name) const;

  // Steps once: true when a row is available, false when done.
  bool step(std::source_location loc = std::source_location::current());
  // Steps a statement that returns no rows.
  void run(std::source_location loc = std::source_location::current());
  // Makes the statement reusable; bindings are kept until rebound.
  void reset();

  bool is_null(int col) const;
  long long int64(int col) const;
  int int32(int col) const { return static_cast<int>(int64(col)); }
  double real(int col) const;  // NULL reads as NaN
  std::string text(int col) const;
  int column_count() const;

 private:
  const Connection& conn_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

// One transaction, rolled back by the destructor unless committed. Writes use BEGIN IMMEDIATE so
// the write lock is taken (and waited for, under the busy timeout) up front: a deferred
// transaction that upgrades later gets SQLITE_BUSY without waiting.
class Transaction {
 public:
  enum class Kind { read, write };
  Transaction(const Connection& conn, Kind kind,
              std::source_location loc = std::source_location::current());
  ~Transaction();  // never throws
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit(std::source_location loc = std::source_location::current());

 private:
  const Connection& conn_;
  bool open_ = false;
};

}  // namespace sgt::db
