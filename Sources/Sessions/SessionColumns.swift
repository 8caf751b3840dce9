import Navigation

/// What a session row keeps of its state beside the state's JSON (migration 0010): what an
/// operator filters sessions by, and what PostgreSQL's one-statement read (`ActionStatements.Read`)
/// needs of the state without parsing it. Every writer of a session row writes these from the
/// state it writes.
struct SessionColumns: Sendable, Equatable {
    /// `stack` or `tabs`.
    let layout: String
    /// The top screen's name, nil before the session starts.
    let topScreen: String?
    /// The session's token (row id in `tokens`), nil when signed out.
    let tokenID: Int64?
    /// Every photo the state names, as a PostgreSQL array literal (`{3,7}`), ascending.
    let photoIDs: String

    init(_ state: SessionState) {
        layout = state.sessionLayout.rawValue
        topScreen = state.top?.screen.rawValue
        tokenID = state.tokenId
        photoIDs = Self.arrayLiteral(state.namedPhotoIDs)
    }

    /// `{3,7}` for the ids 7 and 3.
    static func arrayLiteral(_ ids: Set<Int64>) -> String {
        "{" + ids.sorted().map(String.init).joined(separator: ",") + "}"
    }


    /// Reads an array literal of ids back (`{3,7}`); nil for any other text.
    static func ids(fromArrayLiteral text: String) -> Set<Int64>? {
        guard text.first == "{", text.last == "}" else { return nil }
        let inner = text.dropFirst().dropLast()
        if inner.isEmpty { return [] }
        var ids = Set<Int64>()
        for part in inner.split(separator: ",", omittingEmptySubsequences: false) {
            guard let id = Int64(part) else { return nil }
            ids.insert(id)
        }
        return ids
    }
}
