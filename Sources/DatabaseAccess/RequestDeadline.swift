/// When the request being served began using the database, for a store that bounds its
/// operations (PostgreSQL's `database.statementTimeoutSeconds`): the operations of one request
/// (an action's read, then its write) then share one budget, so the request is answered within
/// the bound as a whole, not within the bound once per operation.
public enum RequestDeadline {
    /// Set by the HTTP layer around each request; nil outside one (the tools).
    @TaskLocal public static var startedAt: ContinuousClock.Instant?
}
