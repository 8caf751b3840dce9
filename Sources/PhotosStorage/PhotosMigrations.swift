import DatabaseAccess
import PhotosCore
import PhotosModel
import SchemaMigrations
import SQLiteStore

/// The project's schema migrations, carried inside the binaries.
public enum PhotosMigrations {
    /// Every SQLite migration, from `Migrations/sqlite/*.sql` (see `scripts/embed-migrations`).
    public static var sqlite: [Migration] { embedded }

    /// Every PostgreSQL migration, from `Migrations/postgres/*.sql`: the same numbers and names.
    public static var postgres: [Migration] { embeddedPostgres }

    /// The migrations of a store of `dialect`.
    public static func `for`(_ dialect: SQLDialect) -> [Migration] {
        switch dialect {
        case .sqlite: sqlite
        case .postgres: postgres
        }
    }

    /// A migrator for `sqlite`.
    public static var migrator: Migrator { Migrator(migrations: embedded) }
}
