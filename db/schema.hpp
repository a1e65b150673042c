// The tuning database's schema: ordered migrations recorded in PRAGMA user_version, and the config
// columns generated from kConfigFields.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "sqlite.hpp"

namespace sgt::db {

// 'SGT1': marks the file as ours, so a write never adds our tables to another program's database.
inline constexpr int kApplicationId = 0x53475431;

// The newest schema version this binary knows (the number of migrations).
int latest_schema_version();

int read_user_version(const Connection& conn);
int read_application_id(const Connection& conn);

// Refuses what this binary must not touch: a newer schema, another application's database, or
// (when !writable) an empty file. An older schema is accepted read-only as it is (readers check
// has_table for what later migrations added); a writable open migrates it. Reads only.
void check_version(const Connection& conn, bool writable);

// Whether the database has this table (a file of an older schema, opened read-only, may not).
bool has_table(const Connection& conn, std::string_view table);

// Brings a writable database to the latest schema in one IMMEDIATE transaction and adds any config
// column kConfigFields has and the table lacks. Takes the write lock only when there is work.
void migrate(const Connection& conn);

// The column names of a table (empty when there is no such table).
std::set<std::string> column_names(const Connection& conn, std::string_view table);

// One entry per kConfigFields field: whether `configs` has its column. A database written by an
// older binary may lack columns for knobs added since; readers then fall back to the name.
std::vector<bool> config_columns_present(const Connection& conn);

}  // namespace sgt::db
