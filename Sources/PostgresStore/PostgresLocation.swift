import Foundation
import PostgresNIO

/// Where a PostgreSQL database is, from `postgres://user[:password]@host[:port]/dbname` (or
/// `postgresql://`; `?host=/dir` for a unix-socket directory). The password may instead come
/// from `PGPASSWORD`; it never appears in `description` or in an error message.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public var username: String
    public var password: String?
    /// A TCP host, or nil with `socketDirectory`.
    public var host: String?
    public var port: Int
    /// A unix-socket directory (the socket is `<dir>/.s.PGSQL.<port>`).
    public var socketDirectory: String?
    public var database: String

    /// True when `text` names a PostgreSQL database rather than a SQLite file.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses `url`; `environment` supplies `PGPASSWORD` when the URL has no password.
    /// Throws `PostgresLocationError` naming what is wrong (never quoting the password).
    public init(url: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard Self.isURL(url), let components = URLComponents(string: url) else {
            throw PostgresLocationError("not a postgres:// URL (postgres://user[:password]@host[:port]/dbname)")
        }
        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw PostgresLocationError("the URL names no user (postgres://user@host/dbname)")
        }
        let path = components.percentEncodedPath.dropFirst()
        guard !path.isEmpty, !path.contains("/"), let database = String(path).removingPercentEncoding else {
            throw PostgresLocationError("the URL names no database (postgres://user@host/dbname)")
        }
        var socketDirectory: String?
        for item in components.queryItems ?? [] {
            switch item.name {
            case "host":
                guard let value = item.value, value.hasPrefix("/") else {
                    throw PostgresLocationError("?host= must be a unix-socket directory (an absolute path)")
                }
                socketDirectory = value
            default:
                throw PostgresLocationError("unknown URL parameter \(item.name.prefix(40)) (only ?host=/dir is understood)")
            }
        }
        let host = components.host.flatMap { $0.isEmpty ? nil : $0 }
        guard host != nil || socketDirectory != nil else {
            throw PostgresLocationError("the URL names no host (postgres://user@host/dbname, or ?host=/socket/dir)")
        }
        if let port = components.port, !(1...65_535).contains(port) {
            throw PostgresLocationError("port must be between 1 and 65535")
        }
        self.username = user
        self.password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding } ?? environment["PGPASSWORD"]
        self.host = socketDirectory == nil ? host : nil
        self.port = components.port ?? 5432
        self.socketDirectory = socketDirectory
        self.database = database
    }

    /// The URL without the password: what logs and errors show.
    public var description: String {
        let place = socketDirectory.map { "?host=\($0)" } ?? ""
        return "postgres://\(username)@\(host ?? ""):\(port)/\(database)\(place)"
    }

    /// One connection's configuration (the same place and credentials as the client's).
    public var connectionConfiguration: PostgresConnection.Configuration {
        if let socketDirectory {
            return PostgresConnection.Configuration(
                unixSocketPath: socketDirectory + "/.s.PGSQL.\(port)", username: username, password: password, database: database)
        }
        return PostgresConnection.Configuration(
            host: host ?? "localhost", port: port, username: username, password: password, database: database, tls: .disable)
    }

    /// The client configuration: TLS off (loopback and unix sockets; a deployment across hosts
    /// puts TLS in front, or extends this).
    public var clientConfiguration: PostgresClient.Configuration {
        if let socketDirectory {
            return PostgresClient.Configuration(
                unixSocketPath: socketDirectory + "/.s.PGSQL.\(port)", username: username, password: password, database: database)
        }
        return PostgresClient.Configuration(
            host: host ?? "localhost", port: port, username: username, password: password, database: database, tls: .disable)
    }
}

/// A `postgres://` URL that cannot be used, and why.
public struct PostgresLocationError: Error, CustomStringConvertible, Equatable {
    public let description: String
    init(_ description: String) { self.description = "database URL: " + description }
}
