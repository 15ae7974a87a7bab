# Writes OUTPUT: a C++ file defining shortener::pg::EmbeddedMigrations() from
# the .sql files in DIR (named NNNN_name.sql), sorted by name.
file(GLOB files "${DIR}/*.sql")
list(SORT files)
set(body "")
foreach(f IN LISTS files)
  get_filename_component(name "${f}" NAME)
  string(REGEX MATCH "^[0-9]+" num "${name}")
  math(EXPR version "${num}")
  file(READ "${f}" sql)
  string(APPEND body "    {${version}, \"${name}\", R\"shortener_sql(${sql})shortener_sql\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from deploy/postgres/migrations. Do not edit.\n#include \"lib/pg/migrations.h\"\n\nnamespace shortener::pg {\n\nconst std::vector<Migration>& EmbeddedMigrations() {\n  static const auto* migrations = new std::vector<Migration>{\n${body}  };\n  return *migrations;\n}\n\n}  // namespace shortener::pg\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
