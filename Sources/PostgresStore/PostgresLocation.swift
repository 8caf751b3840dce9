import Foundation
import NIOSSL
import PostgresNIO

/// Where a PostgreSQL database is, from `postgres://user[:password]@host[:port]/dbname` (or
/// `postgresql://`; `?host=/dir` for a unix-socket directory; `?sslmode=` and `?sslrootcert=` as
/// libpq names them). The password may instead come from a password file
/// (`database.passwordFile`) or `PGPASSWORD`; it never appears in `description` or in an error
/// message.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    public var username: String
    public var password: String?
    /// A TCP host, or nil with `socketDirectory`.
    public var host: String?
    public var port: Int
    /// A unix-socket directory (the socket is `<dir>/.s.PGSQL.<port>`).
    public var socketDirectory: String?
    public var database: String
    /// TLS to the server (`sslmode`): off by default, as over loopback and unix sockets.
    public var sslMode: SSLMode = .disable
    /// The CA certificates (PEM) that `verify-ca` and `verify-full` trust; the system's when nil.
    public var sslRootCert: String?
    /// The hosts after the first in a URL that names several (`postgres://u@h1:5432,h2:5432/db`,
    /// libpq's form): tried in order after `host`.
    public var otherHosts: [Endpoint] = []
    /// Which of the hosts to use (`?target_session_attrs=`): with `readWrite`, the one that
    /// accepts writes (not a standby), found again when it stops answering — a promoted standby
    /// is followed without a restart.
    public var targetSessionAttrs: TargetSessionAttrs = .any

    /// One host and port of a URL that names several.
    public struct Endpoint: Sendable, Equatable, CustomStringConvertible {
        public var host: String
        public var port: Int
        public var description: String { "\(host):\(port)" }
    }

    /// libpq's `target_session_attrs` values that photosd supports.
    public enum TargetSessionAttrs: String, Sendable, CaseIterable {
        /// The first host that answers.
        case any
        /// The first host that accepts writes (`primary` is the same here).
        case readWrite = "read-write"
        case primary
    }

    /// Whether the writable host is wanted (and so looked for among the hosts).
    public var wantsWritable: Bool { targetSessionAttrs != .any }

    /// Each host as a location of its own (the same credentials, database and TLS).
    public var endpoints: [PostgresLocation] {
        guard let host else { return [self] }
        return ([Endpoint(host: host, port: port)] + otherHosts).map { endpoint in
            var single = self
            single.host = endpoint.host
            single.port = endpoint.port
            single.otherHosts = []
            return single
        }
    }

    /// `url` with a host list (`h1:p1,h2:p2`) reduced to its first host, and the others.
    static func splitHosts(_ url: String) throws -> (url: String, others: [Endpoint]) {
        guard let scheme = url.range(of: "://") else { return (url, []) }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let hostStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        let hostList = authority[hostStart...]
        guard hostList.contains(",") else { return (url, []) }
        var others: [Endpoint] = []
        let parts = hostList.split(separator: ",", omittingEmptySubsequences: false)
        for part in parts.dropFirst() {
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            guard (1...2).contains(pieces.count), !pieces[0].isEmpty, !pieces[0].contains("["),
                  let port = pieces.count == 2 ? Int(pieces[1]) : 5432, (1...65_535).contains(port) else {
                throw PostgresLocationError("the URL's hosts must be host[:port], separated by commas (postgres://user@h1:5432,h2:5432/dbname)")
            }
            others.append(Endpoint(host: String(pieces[0]), port: port))
        }
        return (String(url[..<hostStart]) + String(parts[0]) + String(rest[authorityEnd...]), others)
    }

    /// libpq's `sslmode` values that photosd supports.
    public enum SSLMode: String, Sendable, CaseIterable {
        /// Plain TCP: a `hostssl`-only server refuses it.
        case disable
        /// TLS, the server's certificate not checked (protects against a passive listener only).
        case require
        /// TLS, the certificate signed by a CA in `sslrootcert` (any host name).
        case verifyCA = "verify-ca"
        /// TLS, the certificate signed by a CA in `sslrootcert` and naming the URL's host.
        case verifyFull = "verify-full"

        /// `text` as a mode, or an error naming `setting` and the values understood.
        static func parse(_ text: String, setting: String) throws -> SSLMode {
            guard let mode = SSLMode(rawValue: text) else {
                throw PostgresLocationError(
                    "\(setting) '\(text.prefix(40))' is not understood (one of \(allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return mode
        }
    }

    /// What the configuration says beside the URL (`database.sslMode`, `database.sslRootCert`,
    /// `database.passwordFile`); the URL's own parameters win over these, these over the
    /// environment's `PGSSLMODE`, `PGSSLROOTCERT` and `PGPASSWORD`.
    public struct Settings: Sendable, Equatable {
        public var sslMode: String
        public var sslRootCert: String
        public var passwordFile: String

        public init(sslMode: String = "", sslRootCert: String = "", passwordFile: String = "") {
            self.sslMode = sslMode
            self.sslRootCert = sslRootCert
            self.passwordFile = passwordFile
        }
    }

    /// True when `text` names a PostgreSQL database rather than a SQLite file.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// Parses `url` with `settings`; `environment` supplies `PGPASSWORD`, `PGSSLMODE` and
    /// `PGSSLROOTCERT` where neither says. Throws `PostgresLocationError` naming what is wrong
    /// and which setting said it (never quoting the password).
    public init(url given: String, settings: Settings = Settings(), environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let (url, otherHosts) = try Self.splitHosts(given)
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
        var urlSSLMode: SSLMode?
        var urlRootCert: String?
        var targetSessionAttrs = TargetSessionAttrs.any
        for item in components.queryItems ?? [] {
            switch item.name {
            case "host":
                guard let value = item.value, value.hasPrefix("/") else {
                    throw PostgresLocationError("?host= must be a unix-socket directory (an absolute path)")
                }
                socketDirectory = value
            case "sslmode":
                urlSSLMode = try SSLMode.parse(item.value ?? "", setting: "?sslmode=")
            case "sslrootcert":
                guard let value = item.value, !value.isEmpty else { throw PostgresLocationError("?sslrootcert= names no file") }
                urlRootCert = value
            case "target_session_attrs":
                guard let value = TargetSessionAttrs(rawValue: item.value ?? "") else {
                    throw PostgresLocationError(
                        "?target_session_attrs= '\((item.value ?? "").prefix(40))' is not understood (one of \(TargetSessionAttrs.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                targetSessionAttrs = value
            default:
                throw PostgresLocationError("unknown URL parameter \(item.name.prefix(40)) (understood: host, sslmode, sslrootcert, target_session_attrs)")
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
        if let password = components.percentEncodedPassword.flatMap({ $0.removingPercentEncoding }) {
            self.password = password
        } else if let file = Self.nonEmpty(settings.passwordFile) {
            self.password = try Self.readPasswordFile(file)
        } else {
            self.password = environment["PGPASSWORD"]
        }
        if let mode = urlSSLMode {
            sslMode = mode
        } else if let mode = Self.nonEmpty(settings.sslMode) {
            sslMode = try SSLMode.parse(mode, setting: "database.sslMode")
        } else if let mode = Self.nonEmpty(environment["PGSSLMODE"]) {
            sslMode = try SSLMode.parse(mode, setting: "PGSSLMODE")
        }
        sslRootCert = urlRootCert ?? Self.nonEmpty(settings.sslRootCert) ?? Self.nonEmpty(environment["PGSSLROOTCERT"])
        if sslMode != .disable, socketDirectory != nil {
            throw PostgresLocationError("sslmode \(sslMode.rawValue) over a unix socket: TLS needs a TCP host (or sslmode disable)")
        }
        self.host = socketDirectory == nil ? host : nil
        self.port = components.port ?? 5432
        self.socketDirectory = socketDirectory
        self.database = database
        if !otherHosts.isEmpty, socketDirectory != nil {
            throw PostgresLocationError("several hosts and ?host= (a unix socket) together: give TCP hosts, or one socket directory")
        }
        self.otherHosts = otherHosts
        self.targetSessionAttrs = targetSessionAttrs
    }

    /// The URL without the password: what logs and errors show.
    public var description: String {
        var parameters = socketDirectory.map { ["host=\($0)"] } ?? []
        if sslMode != .disable { parameters.append("sslmode=\(sslMode.rawValue)") }
        if targetSessionAttrs != .any { parameters.append("target_session_attrs=\(targetSessionAttrs.rawValue)") }
        let query = parameters.isEmpty ? "" : "?" + parameters.joined(separator: "&")
        let hosts = (["\(host ?? ""):\(port)"] + otherHosts.map(\.description)).joined(separator: ",")
        return "postgres://\(username)@\(hosts)/\(database)\(query)"
    }

    /// One connection's configuration (the same place, credentials and TLS as the client's).
    public var connectionConfiguration: PostgresConnection.Configuration {
        get throws {
            if let socketDirectory {
                return PostgresConnection.Configuration(
                    unixSocketPath: socketDirectory + "/.s.PGSQL.\(port)", username: username, password: password, database: database)
            }
            let tls: PostgresConnection.Configuration.TLS = try tlsConfiguration.map { .require(try NIOSSLContext(configuration: $0)) } ?? .disable
            return PostgresConnection.Configuration(
                host: host ?? "localhost", port: port, username: username, password: password, database: database, tls: tls)
        }
    }

    /// The client configuration.
    public var clientConfiguration: PostgresClient.Configuration {
        get throws {
            if let socketDirectory {
                return PostgresClient.Configuration(
                    unixSocketPath: socketDirectory + "/.s.PGSQL.\(port)", username: username, password: password, database: database)
            }
            return PostgresClient.Configuration(
                host: host ?? "localhost", port: port, username: username, password: password, database: database,
                tls: try tlsConfiguration.map { .require($0) } ?? .disable)
        }
    }

    /// NIOSSL's configuration for `sslMode` (nil: no TLS). The CA file is read here, so a
    /// missing or unreadable one is said before any connection, naming the setting.
    var tlsConfiguration: TLSConfiguration? {
        get throws {
            var tls = TLSConfiguration.makeClientConfiguration()
            switch sslMode {
            case .disable:
                return nil
            case .require:
                tls.certificateVerification = .none
                return tls
            case .verifyCA, .verifyFull:
                tls.certificateVerification = sslMode == .verifyFull ? .fullVerification : .noHostnameVerification
                if let sslRootCert {
                    do {
                        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(sslRootCert))
                    } catch {
                        throw PostgresLocationError("sslrootcert \(sslRootCert) cannot be read as PEM certificates (sslmode \(sslMode.rawValue) needs the CA that signed the server's certificate)")
                    }
                }
                return tls
            }
        }
    }

    private static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    /// The first line of `path` (`database.passwordFile`, a systemd credential): refused when
    /// others than its owner may read it, or when it is empty.
    static func readPasswordFile(_ path: String) throws -> String {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw PostgresLocationError("database.passwordFile \(path) cannot be read (does it exist, and may photosd's user read it?)")
        }
        if let mode = attributes[.posixPermissions] as? Int, mode & 0o077 != 0 {
            throw PostgresLocationError(
                "database.passwordFile \(path) may be read by others (mode \(String(mode, radix: 8))): chmod 600 it, owned by photosd's user")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw PostgresLocationError("database.passwordFile \(path) cannot be read (may photosd's user read it?)")
        }
        let password = String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\r"))
        guard !password.isEmpty else { throw PostgresLocationError("database.passwordFile \(path) is empty") }
        return password
    }
}

/// A `postgres://` URL that cannot be used, and why.
public struct PostgresLocationError: Error, CustomStringConvertible, Equatable {
    public let description: String
    init(_ description: String) { self.description = "database URL: " + description }
}
