import DatabaseAccess
import Navigation
import PhotosCore
import PhotosModel

/// Reads what the navigation core needs to decide an action (`SessionFacts.Needs`) inside the
/// caller's transaction: the named photos, which of them each user owns (a tabs session: the
/// users' whole purchase lists), whether the session's token is live.
enum SessionFactsReader {
    /// The facts for deciding `action` on `state`, stamped with the services' clock now; with
    /// a token chosen beforehand when the action may sign someone in.
    static func read(
        for state: SessionState, action: ClientAction, credentials: CredentialCheck?, signingIn: Int64?,
        auth: AuthService, on connection: any DatabaseConnection
    ) async throws -> SessionFacts {
        let needs = SessionMachine.needs(state: state, action: action, signingIn: signingIn)
        return try await read(
            needs, now: auth.timestamp(), credentials: credentials, newToken: needs.mayIssueToken ? auth.newTokenGrant() : nil,
            auth: auth, on: connection)
    }

    static func read(
        _ needs: SessionFacts.Needs, now: String, credentials: CredentialCheck? = nil, newToken: TokenGrant? = nil,
        auth: AuthService, on connection: any DatabaseConnection
    ) async throws -> SessionFacts {
        var facts = SessionFacts(now: now, credentials: credentials, newToken: newToken)
        let photoIDs = needs.photoIDs.sorted()
        if !photoIDs.isEmpty {
            let marks = Array(repeating: "?", count: photoIDs.count).joined(separator: ", ")
            for row in try await connection.query(
                "SELECT id, title, url, price_cents FROM photos WHERE id IN (\(marks))", arguments: photoIDs.map { $0 as any DatabaseBindable })
            {
                let photo = Photo(id: try row.int64(0), title: try row.string(1), url: try row.string(2), priceCents: try row.int(3))
                facts.photos[photo.id] = photo
            }
        }
        for userID in needs.userIDs.sorted() {
            if needs.purchaseLists {
                let purchased = try await PurchaseService.purchasedPhotos(userID: userID, on: connection)
                facts.purchased[userID] = purchased
                facts.owned[userID] = Set(purchased.map(\.id))
            } else if !photoIDs.isEmpty {
                let marks = Array(repeating: "?", count: photoIDs.count).joined(separator: ", ")
                facts.owned[userID] = Set(try await connection.query(
                    "SELECT photo_id FROM purchases WHERE user_id = ? AND photo_id IN (\(marks))",
                    arguments: [userID as any DatabaseBindable] + photoIDs.map { $0 as any DatabaseBindable }
                ).map { try $0.int64(0) })
            }
        }
        if let tokenID = needs.tokenID {
            facts.tokenLive = try await auth.isLive(tokenID: tokenID, on: connection)
        }
        return facts
    }
}
