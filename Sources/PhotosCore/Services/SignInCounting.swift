/// Where the sign-in limits are counted, chosen once when `AuthService` is made: in memory
/// (`SignInLimiter`: one process serves an SQLite file) or in the database
/// (`SharedSignInLimiter`: several instances serve one PostgreSQL database). The check runs the
/// same way on either: a place taken before bcrypt, given back or counted as a failure after.
protocol SignInCounting: Sendable {
    /// An attempt's place among the counts, as this counter gives it (only this counter's
    /// places can be handed back to it).
    associatedtype Place: Sendable

    /// Takes a place for one password check of `username` from `address`, or throws
    /// `SignInRefused` when a limit is reached.
    func begin(username: String, address: String) async throws -> Place

    /// Ends the attempt that holds `place` with `outcome`.
    func finish(_ place: Place, _ outcome: SignInLimiter.Outcome) async
}

/// Its own `begin` and `finish` (synchronous: the counts are in memory) meet the requirements;
/// its place is an `Attempt`.
extension SignInLimiter: SignInCounting {}

extension SharedSignInLimiter: SignInCounting {
    /// A row of `sign_in_attempts`, and whose attempt it is.
    struct Place: Sendable {
        let id: Int64
        let username: String
        let address: String
    }

    func begin(username: String, address: String) async throws -> Place {
        Place(id: try await takePlace(username: username, address: address), username: username, address: address)
    }

    func finish(_ place: Place, _ outcome: SignInLimiter.Outcome) async {
        await finish(place.id, username: place.username, address: place.address, outcome)
    }
}
