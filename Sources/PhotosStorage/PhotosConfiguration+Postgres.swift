import Foundation
import PhotosCore
import PostgresStore

extension PhotosConfiguration {
    /// The PostgreSQL database `database.path` names, with the configuration's TLS and password
    /// settings (`database.sslMode`, `database.sslRootCert`, `database.passwordFile`); the URL's
    /// own parameters win over these, and these over `PGSSLMODE`, `PGSSLROOTCERT`, `PGPASSWORD`.
    public func postgresLocation(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresLocation {
        try PostgresLocation(
            url: databasePath,
            settings: .init(sslMode: databaseSSLMode, sslRootCert: databaseSSLRootCert, passwordFile: databasePasswordFile),
            environment: environment)
    }
}
