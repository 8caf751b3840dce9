import DatabaseAccess
import Foundation
import PhotosCore
import PhotosModel
import PhotosTestSupport
import Testing

@Suite("PurchaseService and CatalogService")
struct PurchaseServiceTests {
    @Test("a purchase is recorded once; a second buy is alreadyOwned")
    func duplicatePurchase() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        _ = try await test.auth().createUser(username: "alice", password: "correct horse", actor: testOperator)
        let photo = try await test.catalog.add(NewPhoto(title: "Sunset", priceCents: 250), actor: testOperator)
        let first = try await test.purchases.buy(username: "alice", photoID: photo.id, actor: testOperator)
        guard case .purchased(let purchase) = first else { return #expect(Bool(false), "\(first)") }
        #expect(purchase.priceCents == 250)
        let second = try await test.purchases.buy(username: "alice", photoID: photo.id, actor: testOperator)
        #expect(second == .alreadyOwned(purchase))
        #expect(try await test.purchases.purchases(userID: purchase.userID) == [purchase])
        let completed = try await test.database.read { try await $0.queryOne("SELECT count(*) FROM audit_trail WHERE step = 'purchase.completed'")?.int(0) }
        #expect(completed == 1)
    }

    @Test("unknown photo and unknown user are not_found, and write nothing")
    func unknowns() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        _ = try await test.auth().createUser(username: "alice", password: "correct horse", actor: testOperator)
        await #expect(throws: PhotosError.notFound("no photo with id 42")) {
            try await test.purchases.buy(username: "alice", photoID: 42, actor: testOperator)
        }
        await #expect(throws: PhotosError.notFound("no user named bob")) {
            try await test.purchases.buy(username: "bob", photoID: 1, actor: testOperator)
        }
        let rows = try await test.database.read { try await $0.queryOne("SELECT count(*) FROM purchases")?.int(0) }
        #expect(rows == 0)
    }

    @Test("20 concurrent buys of one photo by one user make exactly one purchase row")
    func concurrentBuys() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        _ = try await test.auth().createUser(username: "alice", password: "correct horse", actor: testOperator)
        let photo = try await test.catalog.add(NewPhoto(title: "Sunset", priceCents: 250), actor: testOperator)
        let purchases = test.purchases
        let outcomes = try await withThrowingTaskGroup(of: PurchaseOutcome.self) { group in
            for _ in 0..<20 { group.addTask { try await purchases.buy(username: "alice", photoID: photo.id, actor: testOperator) } }
            var outcomes: [PurchaseOutcome] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        let purchased = outcomes.filter { if case .purchased = $0 { true } else { false } }
        #expect(purchased.count == 1)
        #expect(outcomes.count - purchased.count == 19)
        let rows = try await test.database.read { try await $0.queryOne("SELECT count(*) FROM purchases")?.int(0) }
        #expect(rows == 1)
    }

    @Test("catalogue: add, import all-or-nothing, list with pagination, get")
    func catalogue() async throws {
        let test = try TestDatabase()
        defer { test.close() }
        let imported = try await test.catalog.importPhotos(
            (1...5).map { NewPhoto(title: "Photo \($0)", priceCents: $0 * 100) }, actor: testOperator)
        #expect(imported.count == 5)
        await #expect(throws: PhotosError.self) {
            try await test.catalog.importPhotos([NewPhoto(title: "ok", priceCents: 1), NewPhoto(title: "  ", priceCents: 1)], actor: testOperator)
        }
        #expect(try await test.catalog.list(limit: 2).map(\.title) == ["Photo 1", "Photo 2"])
        #expect(try await test.catalog.list(limit: 10, afterID: imported[3].id).map(\.title) == ["Photo 5"])
        #expect(try await test.catalog.photo(id: imported[2].id)?.priceCents == 300)
        #expect(try await test.catalog.photo(id: 999) == nil)
        let added = try await test.database.read { try await $0.query("SELECT detail FROM audit_trail WHERE step = 'photo.added'").map { try $0.string(0) } }
        #expect(added == [#"{"count":5}"#])
    }
}
