import PhotosModel
import SQLiteStore

/// The project's schema migrations, carried inside the binaries.
public enum PhotosMigrations {
    /// Every SQLite migration, from `Migrations/sqlite/*.sql` (see `scripts/embed-migrations`).
    public static var sqlite: [Migration] { embedded }

    /// Every PostgreSQL migration, from `Migrations/postgres/*.sql`: the same numbers and names.
    public static var postgres: [Migration] { embeddedPostgres }

    /// A migrator for `sqlite`.
    public static var migrator: Migrator { Migrator(migrations: embedded) }
}
