import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel

/// Every service over one open database, wired from the configuration: what `photosd` serves
/// and what `photos-admin` runs, built the same way in both.
public struct PhotosServices: Sendable {
    /// The database.
    public let database: any DatabaseStore
    /// Users, passwords, tokens and the sign-in limits.
    public let auth: AuthService
    /// The photo catalogue.
    public let catalog: CatalogService
    /// Purchases.
    public let purchases: PurchaseService
    /// Client sessions and their coordinators.
    public let sessions: SessionCoordinator
    /// Answers kept for retried actions.
    public let idempotency: IdempotencyStore
    /// Audit checkpoints and verification.
    public let audit: AuditService
    /// The console's operators.
    public let operators: OperatorService
    /// Flow experiments.
    public let experiments: ExperimentService

    /// Wires the services over `database`. The server secret and the audit signing key are read
    /// (or created) when first needed.
    public init(configuration: PhotosConfiguration, database: any DatabaseStore, now: @escaping @Sendable () -> Date = Date.init) throws {
        self.database = database
        auth = AuthService(
            database: database, bcryptCost: configuration.bcryptCost, tokenLifetimeSeconds: configuration.tokenLifetimeSeconds,
            signInMaxAttempts: configuration.signInMaxAttempts, signInWindowSeconds: configuration.signInWindowSeconds,
            signInMaxAttemptsPerAddress: configuration.signInMaxAttemptsPerAddress,
            signInMaxAttemptsPerUsername: configuration.signInMaxAttemptsPerUsername, now: now)
        catalog = CatalogService(database: database)
        purchases = PurchaseService(database: database, now: now)
        idempotency = IdempotencyStore(secretPath: configuration.resolvedSecretKeyPath, retentionSeconds: configuration.idempotencyRetentionSeconds)
        sessions = SessionCoordinator(
            database: database, auth: auth, idempotency: idempotency, idleExpirySeconds: configuration.sessionIdleExpirySeconds,
            traced: !configuration.tracingOTLPEndpoint.isEmpty)
        audit = AuditService(
            database: database, signingKeyPath: configuration.resolvedAuditSigningKeyPath,
            logOrigin: configuration.auditLogOrigin.isEmpty ? nil : configuration.auditLogOrigin,
            witnesses: WitnessPolicy(keys: try configuration.auditWitnesses.map { try $0.cosignerKey }, quorum: configuration.resolvedWitnessQuorum),
            now: now)
        operators = OperatorService(database: database, bcryptCost: configuration.bcryptCost, now: now)
        experiments = ExperimentService(database: database, now: now)
    }

    /// Deletes the idempotency answers past their retention; returns how many.
    public func pruneIdempotencyKeys() async throws -> Int {
        try await idempotency.prune(now: auth.now(), in: database)
    }
}
