import SQLiteStore

/// The project's schema migrations, carried inside the binaries.
public enum PhotosMigrations {
    /// Every migration, from `Migrations/*.sql` (see `scripts/embed-migrations`).
    public static var all: [Migration] { embedded }

    /// A migrator for `all`.
    public static var migrator: Migrator { Migrator(migrations: embedded) }
}
