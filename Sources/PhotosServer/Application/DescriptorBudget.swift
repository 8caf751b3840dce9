import Foundation
import Logging
import PhotosCore

/// The file descriptors photosd may hold, and the connection caps fitted to them.
///
/// Every connection is a descriptor, and so is each database file (SQLite: the file, its WAL and
/// shared memory per connection; PostgreSQL: a socket per pooled connection), each key read, the
/// event loops' own. When the listeners' caps together exceed what the process may open, a flood
/// of connections takes the descriptors the database and the keys need (a checkpoint then fails
/// to read its key). So at start the soft limit is raised to the hard one (as Go's runtime does),
/// and a cap that still does not fit, with `reserved` descriptors kept back, is lowered — with a
/// warning that names the settings.
enum DescriptorBudget {
    /// Descriptors kept for everything but connections.
    static let reserved = 256

    /// `configuration` with its connection caps fitted to the process's descriptor limit (after
    /// raising the soft limit to the hard one).
    static func fitted(_ configuration: PhotosConfiguration, logger: Logger) -> PhotosConfiguration {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return configuration }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = min(limit.rlim_max, 1 << 20)
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return fitted(configuration, descriptors: Int(clamping: limit.rlim_cur), logger: logger)
    }

    /// `configuration` fitted to `descriptors`.
    static func fitted(_ configuration: PhotosConfiguration, descriptors: Int, logger: Logger) -> PhotosConfiguration {
        var fitted = configuration
        let forConnections = max(descriptors - reserved, 16)
        if fitted.consoleEnabled && fitted.consoleMaxConnections > forConnections / 4 {
            fitted.consoleMaxConnections = max(forConnections / 4, 4)
        }
        let forAPI = forConnections - (fitted.consoleEnabled ? fitted.consoleMaxConnections : 0)
        if fitted.serverMaxConnections > forAPI { fitted.serverMaxConnections = max(forAPI, 8) }
        if fitted.serverMaxConnections != configuration.serverMaxConnections || fitted.consoleMaxConnections != configuration.consoleMaxConnections {
            logger.warning(
                "connection caps lowered to fit the descriptor limit: raise the limit (ulimit -n, LimitNOFILE=) or lower server.maxConnections and console.maxConnections",
                metadata: [
                    "descriptors": "\(descriptors)", "reserved": "\(reserved)",
                    "server.maxConnections": "\(configuration.serverMaxConnections) -> \(fitted.serverMaxConnections)",
                    "console.maxConnections": "\(configuration.consoleMaxConnections) -> \(fitted.consoleMaxConnections)",
                ])
        }
        return fitted
    }
}
