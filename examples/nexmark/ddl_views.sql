-- Nexmark: the reference's views (nexmark/nexmark,
-- nexmark-flink/src/main/resources/queries/ddl_views.sql) over the table
-- of ddl_gen.sql (the reference's ${NEXMARK_TABLE}: datagen). Each view
-- has the columns and types of the flat table of the same name in
-- ddl.sql, `dateTime` the rowtime, so that the queries run on either:
--
--   go run ./cmd/weir run -i examples/nexmark/ddl_gen.sql -i examples/nexmark/ddl_views.sql examples/nexmark/q1.sql
--
-- As written in the reference.
CREATE VIEW person AS
SELECT
    person.id,
    person.name,
    person.emailAddress,
    person.creditCard,
    person.city,
    person.state,
    `dateTime`,
    person.extra
FROM datagen WHERE event_type = 0;

CREATE VIEW auction AS
SELECT
    auction.id,
    auction.itemName,
    auction.description,
    auction.initialBid,
    auction.reserve,
    `dateTime`,
    auction.expires,
    auction.seller,
    auction.category,
    auction.extra
FROM datagen WHERE event_type = 1;

CREATE VIEW bid AS
SELECT
    bid.auction,
    bid.bidder,
    bid.price,
    bid.channel,
    bid.url,
    `dateTime`,
    bid.extra
FROM datagen WHERE event_type = 2;
