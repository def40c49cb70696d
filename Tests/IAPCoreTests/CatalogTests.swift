import Foundation
import IAPCore
import IAPSimulator
import Testing

@Suite("StoreKit catalogs")
struct CatalogTests {
    @Test("the sample catalog has all four product types, localizations and settings")
    func sample() throws {
        let c = try Catalog.load(path: MessageSchemas.repoRoot + "/samples/catalog/Game.storekit")
        #expect(c.products.map(\.id).sorted() == ["coins_100", "remove_ads", "season_pass", "vip_monthly", "vip_yearly"])
        #expect(c.product("coins_100")?.kind == .consumable)
        #expect(c.product("remove_ads")?.kind == .nonConsumable)
        #expect(c.product("season_pass")?.kind == .nonRenewingSubscription)
        let vip = try #require(c.product("vip_monthly"))
        #expect(vip.kind == .autoRenewableSubscription && vip.subscriptionPeriod == "P1M" && vip.groupNumber == 2)
        #expect(vip.introductoryOffer?["period"]?.stringValue == "P1W")
        #expect(c.localized(c.product("coins_100")!).title == "100 Coins")
        #expect(c.settings.storefront == "USA" && c.version == "4.0")
    }

    @Test("malformed catalogs are refused with IAP_E_CATALOG", arguments: [
        "", "[]", "{\"products\":{}}", "{\"products\":[{\"type\":\"Consumable\",\"displayPrice\":\"1\"}]}",
        "{\"products\":[{\"productID\":\"a\",\"type\":\"Gizmo\",\"displayPrice\":\"1\"}]}",
        "{\"products\":[{\"productID\":\"a\",\"type\":\"Consumable\",\"displayPrice\":\"one\"}]}",
        "{\"products\":[{\"productID\":\"a\",\"type\":\"Consumable\"}]}",
        "{\"products\":[{\"productID\":\"a\",\"type\":\"Consumable\",\"displayPrice\":\"1\"},{\"productID\":\"a\",\"type\":\"Consumable\",\"displayPrice\":\"1\"}]}",
        "{\"subscriptionGroups\":[{\"id\":\"g\",\"subscriptions\":[{\"productID\":\"s\",\"type\":\"RecurringSubscription\",\"displayPrice\":\"1\"}]}]}",
        "{\"subscriptionGroups\":[{\"id\":\"g\",\"subscriptions\":[{\"productID\":\"s\",\"type\":\"RecurringSubscription\",\"displayPrice\":\"1\",\"recurringSubscriptionPeriod\":\"monthly\"}]}]}",
        // A paid introductory or win-back offer with a price that is not a
        // decimal, or none: it was sold for 0.
        "{\"subscriptionGroups\":[{\"id\":\"g\",\"subscriptions\":[{\"productID\":\"s\",\"type\":\"RecurringSubscription\",\"displayPrice\":\"1\",\"recurringSubscriptionPeriod\":\"P1M\",\"introductoryOffer\":{\"paymentMode\":\"payAsYouGo\",\"displayPrice\":\"1,49\",\"subscriptionPeriod\":\"P1M\",\"numberOfPeriods\":2}}]}]}",
        "{\"subscriptionGroups\":[{\"id\":\"g\",\"subscriptions\":[{\"productID\":\"s\",\"type\":\"RecurringSubscription\",\"displayPrice\":\"1\",\"recurringSubscriptionPeriod\":\"P1M\",\"introductoryOffer\":{\"paymentMode\":\"payUpFront\",\"subscriptionPeriod\":\"P1M\"}}]}]}",
        "{\"subscriptionGroups\":[{\"id\":\"g\",\"subscriptions\":[{\"productID\":\"s\",\"type\":\"RecurringSubscription\",\"displayPrice\":\"1\",\"recurringSubscriptionPeriod\":\"P1M\",\"winbackOffers\":[{\"offerID\":\"w\",\"paymentMode\":\"payAsYouGo\",\"displayPrice\":\"cheap\",\"subscriptionPeriod\":\"P1M\"}]}]}]}",
    ])
    func malformed(_ text: String) {
        do {
            _ = try Catalog.parse(Array(text.utf8))
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.code == .catalog)
            #expect(!error.message.isEmpty)
        }
    }

    @Test("a missing catalog file is IAP_E_CATALOG naming the path")
    func missing() {
        do {
            _ = try Catalog.load(path: "/nonexistent/x.storekit")
            Issue.record("loaded a missing file")
        } catch {
            #expect(error.code == .catalog && error.message.contains("/nonexistent/x.storekit"))
        }
    }

    /// Reads "Expected product IDs" from the corpus README: one line per file,
    /// IDs separated by "," or ";", a leading "." continuing the previous ID's prefix.
    static func expectedIDs(readme: String) -> [String: Set<String>] {
        let files = ["food truck": "apple-sample-food-truck-Products.storekit",
                     "RCTTester": "revenuecat-RCTTester.storekit",
                     "UnitTestsConfiguration": "revenuecat-UnitTestsConfiguration.storekit"]
        var out: [String: Set<String>] = [:]
        for line in readme.split(separator: "\n") where line.hasPrefix("- ") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[line.index(line.startIndex, offsetBy: 2)..<colon].trimmingCharacters(in: .whitespaces)
            guard let file = files[name] else { continue }
            var ids = Set<String>()
            var previous = ""
            for raw in line[line.index(after: colon)...].split(whereSeparator: { $0 == "," || $0 == ";" }) {
                var id = raw.trimmingCharacters(in: .whitespaces)
                if id.hasPrefix("."), let dot = previous.lastIndex(of: ".") { id = String(previous[..<dot]) + id }
                ids.insert(id)
                previous = id
            }
            out[file] = ids
        }
        return out
    }

    static let corpusDir = MessageSchemas.repoRoot + "/../shared/storekit-corpus"

    @Test("every file of the shared StoreKit corpus loads with the product IDs its README lists",
          .enabled(if: FileManager.default.fileExists(atPath: CatalogTests.corpusDir + "/README.md"),
                   "the StoreKit corpus (../shared/storekit-corpus, a checkout next to this repository) is absent; the other catalog tests use samples/catalog"))
    func corpus() throws {
        let dir = CatalogTests.corpusDir
        let readme = try #require(FileManager.default.contents(atPath: dir + "/README.md"))
        let expected = CatalogTests.expectedIDs(readme: String(decoding: readme, as: UTF8.self))
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".storekit") }
        #expect(files.count >= 3)
        #expect(expected.count == 3, "README parse: \(expected)")
        for f in files {
            let c = try Catalog.load(path: dir + "/" + f)
            let ids = Set(c.products.map(\.id))
            #expect(ids == expected[f], "\(f): \(ids.sorted()) vs README \(expected[f]?.sorted() ?? [])")
            for p in c.products { #expect(Price.normalize(p.price) != nil) }
        }
        // Right-to-left localizations survive: the food truck file has Arabic.
        let truck = try Catalog.load(path: dir + "/apple-sample-food-truck-Products.storekit")
        #expect(truck.product("feature.annualhistory")?.localizations.contains { $0.locale == "ar" } == true)
    }

    @Test("a price times a quantity is exact whatever its digits (more than 6 decimals, more than 18 integer digits came back as the unit price)")
    func priceTimesQuantity() {
        #expect(Price.times("0.99", 3) == "2.97")
        #expect(Price.times("5", 2) == "10")
        #expect(Price.times("0.10", 3) == "0.30")
        #expect(Price.times("0.9999999", 3) == "2.9999997")
        #expect(Price.times("123456789012345678901.5", 2) == "246913578024691357803.0")
        #expect(Price.times("0.99", 1) == "0.99")
        #expect(Price.times("not a price", 2) == "not a price")
    }
}
