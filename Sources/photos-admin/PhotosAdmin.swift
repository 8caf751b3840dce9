import ArgumentParser

/// `photos-admin`: the operator's command-line tool.
@main
struct PhotosAdmin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photos-admin",
        abstract: "Operate a photosd database: migrate, seed photos, manage users, purchases and the audit trail.",
        discussion: """
            The database is --db PATH, else $PHOTOS_DB, else database.path from the config file \
            (config/photosd.json, $PHOTOSD_CONFIG or --config). Every change is audited with actor \
            operator:<login name>. Works while photosd runs on the same database.
            """,
        subcommands: [
            Migrate.self, Photos.self, Users.self, SignIn.self, SignOut.self, Purchase.self,
            Audit.self, Backup.self, Check.self,
        ]
    )
}
