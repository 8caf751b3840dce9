import Configuration
import DatabaseAccess
import Foundation
import PhotosModel
import SystemPackage

/// Every setting of `photosd` and `photos-admin`, with its default (docs/design.md, "Configuration").
///
/// Read from, highest priority first: explicit overrides (command-line flags), environment
/// variables `PHOTOSD_…` (`database.path` → `PHOTOSD_DATABASE_PATH`), the JSON config file
/// (`config/photosd.json` by default), then the defaults below, which the shipped file repeats.
public struct PhotosConfiguration: Sendable, Equatable {
    /// Address to listen on.
    public var host = "127.0.0.1"
    /// Port to listen on.
    public var port = 8080
    /// Largest request body accepted, in bytes.
    public var maxBodyBytes = 65_536
    /// A connection that completes no request part for this long is closed: an idle
    /// keep-alive connection, and one that sent only part of a request head.
    public var idleTimeoutSeconds = 60
    /// The longest a request may take to arrive, head and body (a slow sender is answered `408`
    /// and closed). Answering it is not counted.
    public var requestTimeoutSeconds = 30
    /// The most connections the API's listener keeps open at once; one more is closed as soon as
    /// it is accepted (its descriptor freed), so that no flood of idle connections can take every
    /// descriptor the process has (the database's, the keys').
    public var serverMaxConnections = 4_096
    /// `server.maxConnectionsPerAddress`: the most of those one client address holds at once (a
    /// trusted proxy's connections are not counted per address); 0: no such cap. A quarter of
    /// the default `server.maxConnections`, so that no one address can take them all.
    public var serverMaxConnectionsPerAddress = 1_024
    /// How long a graceful stop (SIGTERM, SIGINT) may take before what is left is cancelled.
    public var shutdownTimeoutSeconds = 30
    /// The proxies (addresses or CIDR ranges) whose forwarding header (`forwardedHeader`) names
    /// the client; from any other peer it is ignored. Empty: the TCP peer is the client.
    public var trustedProxies: [String] = []
    /// The one header a trusted proxy's word on the client is read from: `X-Forwarded-For` (what
    /// nginx sets) or `Forwarded` (RFC 7239). The other is never read, so a client cannot slip
    /// an address past a proxy that sets only one of them.
    public var forwardedHeader = "X-Forwarded-For"
    /// The console listener's own trusted proxies: empty by default, so that a console reached
    /// through an SSH tunnel (whose peer is 127.0.0.1) never takes a client's forwarding header.
    public var consoleTrustedProxies: [String] = []
    /// The values `server.forwardedHeader` takes.
    public static let forwardedHeaders = ["X-Forwarded-For", "Forwarded"]
    /// The SQLite file (created on first start), or a `postgres://` URL (see `PostgresLocation`).
    public var databasePath = "data/photos.db"
    /// `full`: fsync on each commit (survives power loss); `normal`: survives a process crash.
    public var durability: Durability = .full
    /// Read-only connections.
    public var readerCount = 4
    /// Most requests committed in one transaction by the writer.
    public var maxBatchSize = 64
    /// How long a write waits for another process's lock before retrying.
    public var busyTimeoutMilliseconds = 5_000
    /// The SQLite VFS to open the file with, by its registered name; empty for the system's.
    public var databaseVFS = ""
    /// PostgreSQL: the most connections (and transactions at once) one instance opens.
    public var maxConnections = 20
    /// PostgreSQL: how long opening one connection may take.
    public var connectTimeoutSeconds = 3
    /// PostgreSQL, photosd: how long a request waits for a connection before `503 unavailable`,
    /// and how long the server lets one of its statements run (a statement sent and never
    /// answered is given up after twice this and a second).
    public var statementTimeoutSeconds = 3
    /// `database.sslMode` (PostgreSQL): `disable`, `require`, `verify-ca` or `verify-full`;
    /// empty: the URL's `?sslmode=`, else `PGSSLMODE`, else `disable`.
    public var databaseSSLMode = ""
    /// `database.sslRootCert`: the CA certificates (PEM) `verify-ca`/`verify-full` trust.
    public var databaseSSLRootCert = ""
    /// `database.passwordFile` (`PHOTOSD_DATABASE_PASSWORD_FILE`): the PostgreSQL password's
    /// file (a systemd credential), refused when others than its owner may read it.
    public var databasePasswordFile = ""
    /// Lifetime of a bearer token.
    public var tokenLifetimeSeconds = 86_400
    /// bcrypt cost (4–31; each step doubles the time).
    public var bcryptCost = 12
    /// The server secret's file (see `ServerSecret`); empty means `photosd-secret.key` beside
    /// the database file. Instances sharing a PostgreSQL database must share this file (and the
    /// audit signing key): a retried request's fingerprint and the checkpoints' signatures
    /// depend on them.
    public var secretKeyPath = ""
    /// The Ed25519 key that signs audit checkpoints (created 0600 on first use). A relative
    /// path is resolved against the SQLite database's directory (see
    /// `resolvedAuditSigningKeyPath`), so the default is `audit-signing.key` beside the database.
    public var auditSigningKeyPath = "audit-signing.key"
    /// How often `photosd` writes an audit checkpoint when anything changed.
    public var auditCheckpointIntervalSeconds = 10
    /// `audit.checkpointMaxAgeSeconds`: `/readyz` fails (`checkpoint`) once an audit row has
    /// waited this long for a checkpoint to sign it — checkpoints have stopped (a key that cannot
    /// be read, storage refusing the write).
    public var auditCheckpointMaxAgeSeconds = 60
    /// `audit.logOrigin`: the transparency log's name, the first line of every checkpoint note
    /// and the name of its key (`photos-admin audit key --note`); empty: the database's own
    /// (`photosd/` and 16 hex digits, made once by migration 0020). Changing it changes the note
    /// key every witness and receipt checker holds.
    public var auditLogOrigin = ""
    /// `audit.witnesses`: the C2SP tlog-witness witnesses photosd asks to cosign each checkpoint
    /// (`WitnessEndpoint`); empty: none, receipts carry the log's signature alone.
    public var auditWitnesses: [WitnessEndpoint] = []
    /// `audit.witnessQuorum`: how many of `auditWitnesses` must have cosigned a checkpoint before
    /// `/v1/log/checkpoint` and receipts use it; 0 (the default): all of them.
    public var auditWitnessQuorum = 0
    /// `log.public`: serve the log's newest checkpoint and its consistency proofs
    /// (`GET /v1/log/checkpoint`, `GET /v1/log/consistency`) to anyone; false: 404.
    public var logPublic = true
    /// `receipts.maxRows`: the most rows one receipt holds (`GET /v1/sessions/{id}/receipt`,
    /// `photos-admin audit prove`); a longer trail's receipt holds the newest this many, or those
    /// from `?fromSeq=N`, and starts its chain at `previousHash`.
    public var receiptsMaxRows = 1_000
    /// How long the answer to an `Idempotency-Key` is kept for retries.
    public var idempotencyRetentionSeconds = 86_400
    /// `sessions.idleExpirySeconds`: a session idle this long ends (`session.expired`, then
    /// `410 session_expired`); 0 = never. 30 days by default.
    public var sessionIdleExpirySeconds = 30 * 86_400
    /// Failed sign-ins allowed per (username, client address) within the window.
    public var signInMaxAttempts = 5
    /// Failed sign-ins allowed per client address within the window, all usernames (bounds the
    /// bcrypt work one address can cause); 0: no limit.
    public var signInMaxAttemptsPerAddress = 20
    /// Failed sign-ins allowed per username within the window, from all addresses but those
    /// where the user signed in successfully in the last 30 days; 0: no limit.
    public var signInMaxAttemptsPerUsername = 50
    /// The window for failed sign-ins.
    public var signInWindowSeconds = 300
    /// swift-log level: trace, debug, info, notice, warning, error, critical.
    public var logLevel = "info"
    /// `text` (swift-log's lines) or `json`: one JSON object per line, with `time`, `level`,
    /// `message` and the metadata as fields (a request's line with `durationMs`).
    public var logFormat = "text"
    /// How long a line below `notice` (a request's line) may wait to be written with others; 0:
    /// every line is written at once.
    public var logFlushMilliseconds = 10
    /// Sessions one client address may create per minute (`429` past it); 0: no limit.
    public var sessionsPerMinutePerAddress = 120
    /// Change-feed long polls one client address may hold open at once (`429` past it).
    public var longPollsPerAddress = 16
    /// Seed demo photos into an empty catalogue on start.
    public var seedDemoData = false
    /// Serve the operator console (its own listener, never the API's).
    public var consoleEnabled = true
    /// Address the console listens on: only this machine by default.
    public var consoleHost = "127.0.0.1"
    /// Port the console listens on (0: any free port).
    public var consolePort = 8081
    /// A console sign-in ends after this many minutes without a request.
    public var consoleSessionMinutes = 30
    /// Mark the console's cookie `Secure` (for a console behind TLS).
    public var consoleSecureCookies = false
    /// The most connections the console's listener keeps open at once (as `server.maxConnections`;
    /// the console's own, so that connections to it never take the API's).
    public var consoleMaxConnections = 64
    /// Serve `/metrics` (Prometheus text) on a listener of its own — never on the API's port,
    /// which the public reaches.
    public var metricsEnabled = true
    /// Address the metrics listener binds: only this machine by default (a Prometheus on
    /// another host needs it opened, e.g. `0.0.0.0` behind a firewall).
    public var metricsHost = "127.0.0.1"
    /// Port of the metrics listener (0: any free port).
    public var metricsPort = 8082
    /// Where to send traces, by OTLP/HTTP: a collector's base URL (`http://127.0.0.1:4318`, spans
    /// go to its `/v1/traces`) or the full traces URL; empty: no tracing.
    public var tracingOTLPEndpoint = ""

    /// The defaults.
    public init() {}

    /// `secretKeyPath`, or its default beside the database file (`data/photosd-secret.key` for a
    /// PostgreSQL database, which has no directory).
    public var resolvedSecretKeyPath: String {
        guard secretKeyPath.isEmpty else { return secretKeyPath }
        if databaseIsURL { return "data/photosd-secret.key" }
        let directory = (databasePath as NSString).deletingLastPathComponent
        return directory.isEmpty ? "photosd-secret.key" : directory + "/photosd-secret.key"
    }

    /// True when `databasePath` is a PostgreSQL URL rather than a SQLite file.
    var databaseIsURL: Bool { databasePath.hasPrefix("postgres://") || databasePath.hasPrefix("postgresql://") }

    /// How many witnesses must have cosigned a checkpoint before it is served: `audit.witnessQuorum`,
    /// or all of `audit.witnesses` when that is 0.
    public var resolvedWitnessQuorum: Int {
        auditWitnessQuorum == 0 ? auditWitnesses.count : auditWitnessQuorum
    }

    /// `auditSigningKeyPath` as a file to open: an absolute path as it is; a relative one against
    /// the SQLite database's directory, so that photosd and photos-admin started from any
    /// working directory find the key that signed the database's checkpoints. A PostgreSQL
    /// database has no directory: there a relative path is taken under `data/` in the working
    /// directory, beside the default server secret (deployments give an absolute path; a missing
    /// or other key is refused while checkpoints exist, see `AuditService.checkedSigningKey`).
    public var resolvedAuditSigningKeyPath: String {
        if auditSigningKeyPath.hasPrefix("/") { return auditSigningKeyPath }
        let directory = databaseIsURL ? "data" : (databasePath as NSString).deletingLastPathComponent
        return directory.isEmpty ? auditSigningKeyPath : directory + "/" + auditSigningKeyPath
    }

    /// What loading found worth telling but not refusing: keys of the file that are no setting
    /// (a typo, a setting of another version), each with the nearest known key. The programs
    /// print or log them at start.
    public var warnings: [String] = []

    /// A warning per trusted-proxy list that takes every address (`0.0.0.0/0`, `::/0`): then any
    /// client sets its own address in the forwarded header, and every per-address limit (sign-in,
    /// session creation, long polls, connections) is its to choose.
    var trustEveryoneWarnings: [String] {
        [("server.trustedProxies", trustedProxies), ("console.trustedProxies", consoleTrustedProxies)].compactMap { key, entries in
            guard let all = entries.first(where: { $0.hasSuffix("/0") }) else { return nil }
            return "configuration \(key) includes \(all), which is every address: any client can set the address photosd sees (and every per-address limit) "
                + "in \(forwardedHeader); list only your proxies' addresses"
        }
    }

    /// The dotted paths of the leaves of a JSON object (`{"server": {"port": 1}}` → `server.port`).
    static func leafKeys(of json: Any, prefix: String = "") -> [String] {
        guard let object = json as? [String: Any] else { return prefix.isEmpty ? [] : [prefix] }
        if object.isEmpty && !prefix.isEmpty { return [prefix] }
        return object.keys.sorted().flatMap { key in leafKeys(of: object[key] as Any, prefix: prefix.isEmpty ? key : prefix + "." + key) }
    }

    /// One warning per key of `keys` that is no setting, naming the nearest setting.
    static func unknownKeyWarnings(_ keys: [String], in path: String) -> [String] {
        let known = defaultValues.keys.map { $0.components.joined(separator: ".") }
        return keys.filter { !known.contains($0) }.map { key in
            let hint = Spelling.nearest(to: key, in: known, slack: 3).map { " (did you mean \($0)?)" } ?? ""
            return "config file \(path): \(key) is not a setting and is ignored\(hint)"
        }
    }

    /// The keys, as written in the JSON file (dotted paths) and their defaults.
    static let defaultValues: [AbsoluteConfigKey: ConfigValue] = {
        let defaults = PhotosConfiguration()
        return [
            "server.host": .init(.string(defaults.host), isSecret: false),
            "server.port": .init(.int(defaults.port), isSecret: false),
            "server.maxBodyBytes": .init(.int(defaults.maxBodyBytes), isSecret: false),
            "server.idleTimeoutSeconds": .init(.int(defaults.idleTimeoutSeconds), isSecret: false),
            "server.requestTimeoutSeconds": .init(.int(defaults.requestTimeoutSeconds), isSecret: false),
            "server.maxConnections": .init(.int(defaults.serverMaxConnections), isSecret: false),
            "server.maxConnectionsPerAddress": .init(.int(defaults.serverMaxConnectionsPerAddress), isSecret: false),
            "server.shutdownTimeoutSeconds": .init(.int(defaults.shutdownTimeoutSeconds), isSecret: false),
            "server.trustedProxies": .init(.stringArray(defaults.trustedProxies), isSecret: false),
            "server.forwardedHeader": .init(.string(defaults.forwardedHeader), isSecret: false),
            // A postgres:// URL may carry a password: never printed by the configuration's logging.
            "database.path": .init(.string(defaults.databasePath), isSecret: true),
            "database.durability": .init(.string(defaults.durability.rawValue), isSecret: false),
            "database.readers": .init(.int(defaults.readerCount), isSecret: false),
            "database.maxBatchSize": .init(.int(defaults.maxBatchSize), isSecret: false),
            "database.busyTimeoutMs": .init(.int(defaults.busyTimeoutMilliseconds), isSecret: false),
            "database.vfs": .init(.string(defaults.databaseVFS), isSecret: false),
            "database.maxConnections": .init(.int(defaults.maxConnections), isSecret: false),
            "database.connectTimeoutSeconds": .init(.int(defaults.connectTimeoutSeconds), isSecret: false),
            "database.statementTimeoutSeconds": .init(.int(defaults.statementTimeoutSeconds), isSecret: false),
            "database.sslMode": .init(.string(defaults.databaseSSLMode), isSecret: false),
            "database.sslRootCert": .init(.string(defaults.databaseSSLRootCert), isSecret: false),
            "database.passwordFile": .init(.string(defaults.databasePasswordFile), isSecret: false),
            "auth.tokenLifetimeSeconds": .init(.int(defaults.tokenLifetimeSeconds), isSecret: false),
            "auth.bcryptCost": .init(.int(defaults.bcryptCost), isSecret: false),
            "auth.secretKeyPath": .init(.string(defaults.secretKeyPath), isSecret: false),
            "auth.signInMaxAttempts": .init(.int(defaults.signInMaxAttempts), isSecret: false),
            "auth.signInWindowSeconds": .init(.int(defaults.signInWindowSeconds), isSecret: false),
            "auth.signInMaxAttemptsPerAddress": .init(.int(defaults.signInMaxAttemptsPerAddress), isSecret: false),
            "auth.signInMaxAttemptsPerUsername": .init(.int(defaults.signInMaxAttemptsPerUsername), isSecret: false),
            "idempotency.retentionSeconds": .init(.int(defaults.idempotencyRetentionSeconds), isSecret: false),
            "sessions.idleExpirySeconds": .init(.int(defaults.sessionIdleExpirySeconds), isSecret: false),
            "audit.signingKeyPath": .init(.string(defaults.auditSigningKeyPath), isSecret: false),
            "audit.checkpointIntervalSeconds": .init(.int(defaults.auditCheckpointIntervalSeconds), isSecret: false),
            "audit.checkpointMaxAgeSeconds": .init(.int(defaults.auditCheckpointMaxAgeSeconds), isSecret: false),
            "audit.logOrigin": .init(.string(defaults.auditLogOrigin), isSecret: false),
            // A JSON array of {"name", "url", "key"}: in the file as one, in the environment
            // (PHOTOSD_AUDIT_WITNESSES) as its JSON text (`SettingsFileSnapshot`).
            "audit.witnesses": .init(.string("[]"), isSecret: false),
            "audit.witnessQuorum": .init(.int(defaults.auditWitnessQuorum), isSecret: false),
            "log.public": .init(.bool(defaults.logPublic), isSecret: false),
            "receipts.maxRows": .init(.int(defaults.receiptsMaxRows), isSecret: false),
            "limits.sessionsPerMinutePerAddress": .init(.int(defaults.sessionsPerMinutePerAddress), isSecret: false),
            "limits.longPollsPerAddress": .init(.int(defaults.longPollsPerAddress), isSecret: false),
            "log.level": .init(.string(defaults.logLevel), isSecret: false),
            "log.format": .init(.string(defaults.logFormat), isSecret: false),
            "log.flushMilliseconds": .init(.int(defaults.logFlushMilliseconds), isSecret: false),
            "demo.seed": .init(.bool(defaults.seedDemoData), isSecret: false),
            "console.enabled": .init(.bool(defaults.consoleEnabled), isSecret: false),
            "console.host": .init(.string(defaults.consoleHost), isSecret: false),
            "console.port": .init(.int(defaults.consolePort), isSecret: false),
            "console.sessionMinutes": .init(.int(defaults.consoleSessionMinutes), isSecret: false),
            "console.secureCookies": .init(.bool(defaults.consoleSecureCookies), isSecret: false),
            "console.maxConnections": .init(.int(defaults.consoleMaxConnections), isSecret: false),
            "console.trustedProxies": .init(.stringArray(defaults.consoleTrustedProxies), isSecret: false),
            "metrics.enabled": .init(.bool(defaults.metricsEnabled), isSecret: false),
            "metrics.host": .init(.string(defaults.metricsHost), isSecret: false),
            "metrics.port": .init(.int(defaults.metricsPort), isSecret: false),
            "tracing.otlpEndpoint": .init(.string(defaults.tracingOTLPEndpoint), isSecret: false),
        ]
    }()

    /// The config file the configuration was read from (nil: none, the defaults and the
    /// environment only).
    public var filePath: String?

    /// The config file used when none is named: `config/photosd.json` under the working directory.
    public static let defaultFilePath = "config/photosd.json"
    /// Where a system's service keeps its configuration (`deploy/photosd.service`): the
    /// operator's tools look there last, so that `photos-admin` run from cron or a shell outside
    /// the service's directory works on the service's database, not on a stray `data/photos.db`.
    public static let systemFilePath = "/etc/photosd/photosd.json"

    /// The file `load` reads, of: `filePath` (`--config`), else `PHOTOSD_CONFIG`, else
    /// `config/photosd.json` when it exists, else the first of `fallbacks` that exists; nil when
    /// none does (the defaults apply).
    public static func fileToRead(filePath: String?, environment: [String: String], fallbacks: [String] = []) -> String? {
        if let explicit = filePath ?? environment["PHOTOSD_CONFIG"] { return explicit }
        return ([defaultFilePath] + fallbacks).first { FileManager.default.fileExists(atPath: $0) }
    }

    /// Loads the configuration.
    ///
    /// - Parameters:
    ///   - filePath: the JSON file; nil means `PHOTOSD_CONFIG`, else `config/photosd.json` if it exists.
    ///   - environment: the environment to read `PHOTOSD_…` variables from.
    ///   - overrides: values that beat everything (from command-line flags), by dotted key.
    ///   - fallbacks: files to read, the first that exists, when none of the above is there
    ///     (photos-admin: `systemFilePath`).
    public static func load(
        filePath: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        overrides: [String: ConfigValue] = [:],
        fallbacks: [String] = []
    ) async throws -> PhotosConfiguration {
        var providers: [any ConfigProvider] = []
        providers.append(InMemoryProvider(values: Dictionary(uniqueKeysWithValues: overrides.map { (AbsoluteConfigKey($0.key.split(separator: ".").map(String.init)), $0.value) })))
        providers.append(EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: "photosd"))
        var fileKeys: [String] = []
        let chosen = fileToRead(filePath: filePath, environment: environment, fallbacks: fallbacks)
        let path = chosen ?? defaultFilePath
        if let path = chosen {
            guard FileManager.default.fileExists(atPath: path) else {
                throw PhotosError.badRequest("config file \(path) does not exist")
            }
            // Read and parsed here first, so that a failure is told in our words (the provider's
            // errors carry Foundation's: "NSCocoaErrorDomain Code=3840 …").
            let contents: Data
            do {
                contents = try Data(contentsOf: URL(fileURLWithPath: path))
            } catch {
                throw PhotosError.badRequest("config file \(path) cannot be read: \(FileErrors.reason(error))")
            }
            do {
                fileKeys = Self.leafKeys(of: try JSONSerialization.jsonObject(with: contents))
            } catch {
                throw PhotosError.badRequest("config file \(path) is not valid JSON\(FileErrors.jsonPosition(error).map { " (\($0))" } ?? "")")
            }
            do {
                providers.append(try await FileProvider<SettingsFileSnapshot>(filePath: FilePath(path)))
            } catch {
                throw PhotosError.badRequest("config file \(path) is not a JSON object of settings")
            }
        }
        providers.append(InMemoryProvider(values: defaultValues))
        var configuration: PhotosConfiguration
        do {
            configuration = try PhotosConfiguration(reader: ConfigReader(providers: providers))
        } catch let error as PhotosError {
            // Say where the bad value came from: a flag, the environment or the file.
            throw PhotosError(error.code, error.message + Self.source(
                ofSettingIn: error.message, overrides: Set(overrides.keys), environment: environment, fileKeys: Set(fileKeys), path: path))
        }
        configuration.warnings = Self.unknownKeyWarnings(fileKeys, in: path) + configuration.trustEveryoneWarnings
        configuration.filePath = chosen
        return configuration
    }

    /// ` (from PHOTOSD_SERVER_PORT)`, ` (from a command-line flag)` or ` (from config file F)` for
    /// the setting a message `configuration KEY …` names; empty when it is the default's.
    static func source(ofSettingIn message: String, overrides: Set<String>, environment: [String: String], fileKeys: Set<String>, path: String) -> String {
        guard let match = message.firstMatch(of: /^configuration ([A-Za-z.]+)/) else { return "" }
        let key = String(match.1)
        if overrides.contains(key) { return " (from a command-line flag)" }
        let variable = environmentVariable(for: key)
        if environment[variable] != nil { return " (from the environment: \(variable))" }
        if fileKeys.contains(key) { return " (from config file \(path))" }
        return ""
    }

    /// `PHOTOSD_AUTH_SIGN_IN_MAX_ATTEMPTS` for `auth.signInMaxAttempts`.
    static func environmentVariable(for key: String) -> String {
        var name = "PHOTOSD"
        for part in key.split(separator: ".") {
            name += "_"
            for character in part {
                if character.isUppercase { name += "_" }
                name += character.uppercased()
            }
        }
        return name
    }

    init(reader: ConfigReader) throws {
        func int(_ key: String, _ range: ClosedRange<Int>) throws -> Int {
            let value: Int
            do {
                value = try reader.requiredInt(forKey: ConfigKey(key.split(separator: ".").map(String.init)))
            } catch {
                throw PhotosError.badRequest("configuration \(key) must be an integer")
            }
            guard range.contains(value) else {
                throw PhotosError.badRequest("configuration \(key) = \(value) is out of range \(range.lowerBound)…\(range.upperBound)")
            }
            return value
        }
        func string(_ key: String) throws -> String {
            do {
                return try reader.requiredString(forKey: ConfigKey(key.split(separator: ".").map(String.init)))
            } catch {
                throw PhotosError.badRequest("configuration \(key) must be a string")
            }
        }
        func bool(_ key: String) throws -> Bool {
            do {
                return try reader.requiredBool(forKey: ConfigKey(key.split(separator: ".").map(String.init)))
            } catch {
                throw PhotosError.badRequest("configuration \(key) must be true or false")
            }
        }
        host = try string("server.host")
        port = try int("server.port", 0...65_535)
        maxBodyBytes = try int("server.maxBodyBytes", 1_024...(64 << 20))
        idleTimeoutSeconds = try int("server.idleTimeoutSeconds", 1...86_400)
        requestTimeoutSeconds = try int("server.requestTimeoutSeconds", 1...86_400)
        serverMaxConnections = try int("server.maxConnections", 1...1_000_000)
        serverMaxConnectionsPerAddress = try int("server.maxConnectionsPerAddress", 0...1_000_000)
        shutdownTimeoutSeconds = try int("server.shutdownTimeoutSeconds", 1...3_600)
        func proxies(_ section: String) throws -> [String] {
            var entries: [String]
            do {
                entries = try reader.requiredStringArray(forKey: ConfigKey([section, "trustedProxies"]))
            } catch {
                // A JSON string is taken as the environment's form: comma-separated.
                guard let text = try? reader.requiredString(forKey: ConfigKey([section, "trustedProxies"])) else {
                    throw PhotosError.badRequest("configuration \(section).trustedProxies must be a list of addresses or CIDR ranges")
                }
                entries = text.split(separator: ",").map { String($0) }
            }
            return entries.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        trustedProxies = try proxies("server")
        consoleTrustedProxies = try proxies("console")
        let header = try string("server.forwardedHeader")
        guard let known = Self.forwardedHeaders.first(where: { $0.lowercased() == header.lowercased() }) else {
            throw PhotosError.badRequest("configuration server.forwardedHeader must be X-Forwarded-For or Forwarded, not \(header.prefix(64))")
        }
        forwardedHeader = known
        databasePath = try string("database.path")
        guard !databasePath.isEmpty else { throw PhotosError.badRequest("configuration database.path must not be empty") }
        let durabilityText = try string("database.durability")
        guard let durability = Durability(rawValue: durabilityText.lowercased()) else {
            throw PhotosError.badRequest("configuration database.durability must be full or normal, not \(durabilityText)")
        }
        self.durability = durability
        readerCount = try int("database.readers", 1...64)
        maxBatchSize = try int("database.maxBatchSize", 1...10_000)
        busyTimeoutMilliseconds = try int("database.busyTimeoutMs", 0...600_000)
        databaseVFS = try string("database.vfs")
        maxConnections = try int("database.maxConnections", 1...1_000)
        connectTimeoutSeconds = try int("database.connectTimeoutSeconds", 1...600)
        statementTimeoutSeconds = try int("database.statementTimeoutSeconds", 1...3_600)
        databaseSSLMode = try string("database.sslMode")
        guard ["", "disable", "require", "verify-ca", "verify-full"].contains(databaseSSLMode) else {
            throw PhotosError.badRequest("configuration database.sslMode '\(databaseSSLMode.prefix(40))' is not one of disable, require, verify-ca, verify-full")
        }
        databaseSSLRootCert = try string("database.sslRootCert")
        databasePasswordFile = try string("database.passwordFile")
        tokenLifetimeSeconds = try int("auth.tokenLifetimeSeconds", 1...(366 * 86_400))
        bcryptCost = try int("auth.bcryptCost", 4...31)
        secretKeyPath = try string("auth.secretKeyPath")
        idempotencyRetentionSeconds = try int("idempotency.retentionSeconds", 1...(366 * 86_400))
        sessionIdleExpirySeconds = try int("sessions.idleExpirySeconds", 0...(10 * 366 * 86_400))
        auditSigningKeyPath = try string("audit.signingKeyPath")
        guard !auditSigningKeyPath.isEmpty else { throw PhotosError.badRequest("configuration audit.signingKeyPath must not be empty") }
        auditCheckpointIntervalSeconds = try int("audit.checkpointIntervalSeconds", 1...86_400)
        auditCheckpointMaxAgeSeconds = try int("audit.checkpointMaxAgeSeconds", 1...(30 * 86_400))
        guard auditCheckpointMaxAgeSeconds > auditCheckpointIntervalSeconds else {
            throw PhotosError.badRequest(
                "configuration audit.checkpointMaxAgeSeconds (\(auditCheckpointMaxAgeSeconds)) must be longer than audit.checkpointIntervalSeconds (\(auditCheckpointIntervalSeconds)): a checkpoint is written only that often")
        }
        auditLogOrigin = try string("audit.logOrigin")
        guard auditLogOrigin.utf8.count <= 200, !auditLogOrigin.contains("+"),
              !auditLogOrigin.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 }) else {
            throw PhotosError.badRequest("configuration audit.logOrigin must be at most 200 bytes with no spaces and no '+' (it names the checkpoints' key)")
        }
        auditWitnesses = try WitnessEndpoint.list(parsing: try string("audit.witnesses"))
        auditWitnessQuorum = try int("audit.witnessQuorum", 0...max(0, auditWitnesses.count))
        logPublic = try bool("log.public")
        receiptsMaxRows = try int("receipts.maxRows", 1...100_000)
        signInMaxAttempts = try int("auth.signInMaxAttempts", 1...1_000_000)
        signInWindowSeconds = try int("auth.signInWindowSeconds", 1...(7 * 86_400))
        signInMaxAttemptsPerAddress = try int("auth.signInMaxAttemptsPerAddress", 0...1_000_000)
        signInMaxAttemptsPerUsername = try int("auth.signInMaxAttemptsPerUsername", 0...1_000_000)
        sessionsPerMinutePerAddress = try int("limits.sessionsPerMinutePerAddress", 0...1_000_000)
        longPollsPerAddress = try int("limits.longPollsPerAddress", 1...100_000)
        logLevel = try string("log.level")
        let levels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]
        guard levels.contains(logLevel) else {
            throw PhotosError.badRequest("configuration log.level must be one of \(levels.joined(separator: ", "))")
        }
        logFormat = try string("log.format")
        logFlushMilliseconds = try int("log.flushMilliseconds", 0...1_000)
        guard ["text", "json"].contains(logFormat) else {
            throw PhotosError.badRequest("configuration log.format must be text or json, not \(logFormat.prefix(32))")
        }
        seedDemoData = try bool("demo.seed")
        consoleEnabled = try bool("console.enabled")
        consoleHost = try string("console.host")
        consolePort = try int("console.port", 0...65_535)
        consoleSessionMinutes = try int("console.sessionMinutes", 1...(7 * 24 * 60))
        consoleSecureCookies = try bool("console.secureCookies")
        consoleMaxConnections = try int("console.maxConnections", 1...1_000_000)
        if consoleEnabled && consoleHost == host && consolePort == port && port != 0 {
            throw PhotosError.badRequest("configuration console.port must differ from server.port: the API port never serves the console")
        }
        tracingOTLPEndpoint = try string("tracing.otlpEndpoint")
        if !tracingOTLPEndpoint.isEmpty {
            guard let url = URL(string: tracingOTLPEndpoint), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
                throw PhotosError.badRequest("configuration tracing.otlpEndpoint must be an http:// or https:// URL (a collector's OTLP/HTTP address, e.g. http://127.0.0.1:4318), not \(tracingOTLPEndpoint.prefix(64))")
            }
        }
        metricsEnabled = try bool("metrics.enabled")
        metricsHost = try string("metrics.host")
        metricsPort = try int("metrics.port", 0...65_535)
        if metricsEnabled && metricsPort != 0 {
            if metricsHost == host && metricsPort == port {
                throw PhotosError.badRequest("configuration metrics.port must differ from server.port: the API port never serves /metrics")
            }
            if consoleEnabled && metricsHost == consoleHost && metricsPort == consolePort {
                throw PhotosError.badRequest("configuration metrics.port must differ from console.port")
            }
        }
    }
}
