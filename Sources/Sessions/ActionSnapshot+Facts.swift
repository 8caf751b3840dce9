import DatabaseAccess
import Navigation
import PhotosCore
import PhotosModel

extension ActionSnapshot {
    /// The facts `needs` names, as this snapshot read them, stamped `now`; nil when it did not
    /// read them all. A token is live by `AuthService.isLive`, the rule every check applies.
    func facts(for needs: SessionFacts.Needs, now: String, credentials: CredentialCheck? = nil, newToken: TokenGrant? = nil) -> SessionFacts? {
        guard covered.covers(needs.read) else { return nil }
        var facts = SessionFacts(now: now, credentials: credentials, newToken: newToken)
        for photo in photos where needs.photoIDs.contains(photo.id) { facts.photos[photo.id] = Photo(photo) }
        for userID in needs.userIDs {
            let bought = (purchases[userID] ?? []).map(Photo.init)
            if needs.purchaseLists {
                facts.purchased[userID] = bought
                facts.owned[userID] = Set(bought.map(\.id))
            } else if !needs.photoIDs.isEmpty {
                facts.owned[userID] = Set(bought.map(\.id)).intersection(needs.photoIDs)
            }
        }
        if needs.tokenID != nil {
            facts.tokenLive = token.map { AuthService.isLive(expiresAt: $0.expiresAt, revoked: $0.revoked, at: now) } ?? false
        }
        return facts
    }
}

extension Photo {
    /// A photo as a store's row holds it.
    init(_ record: PhotoRecord) {
        self.init(id: record.id, title: record.title, url: record.url, priceCents: record.priceCents)
    }
}
