-- Nexmark: the reference's generator table (nexmark/nexmark,
-- nexmark-flink/src/main/resources/queries/ddl_gen.sql): one table of
-- all events, event_type 0 (person), 1 (auction) or 2 (bid), the event in
-- the ROW column of its kind (the other two are NULL), its time as the
-- computed column `dateTime` with the watermark on it. ddl_views.sql
-- makes the views person, auction and bid over it; the queries q0-q23
-- run over those views as over the flat tables of ddl.sql.
--
-- As written in the reference but for the WITH options: its ${TPS} and
-- ${EVENTS_NUM} placeholders are 1,000 events a second of event time and
-- 100,000 events, as in ddl.sql, and 'base-time' (a Weir extension) fixes
-- the timeline, so that two runs see the same events.
CREATE TABLE datagen (
    event_type int,
    person ROW<
        id  BIGINT,
        name  VARCHAR,
        emailAddress  VARCHAR,
        creditCard  VARCHAR,
        city  VARCHAR,
        state  VARCHAR,
        `dateTime` TIMESTAMP(3),
        extra  VARCHAR>,
    auction ROW<
        id  BIGINT,
        itemName  VARCHAR,
        description  VARCHAR,
        initialBid  BIGINT,
        reserve  BIGINT,
        `dateTime`  TIMESTAMP(3),
        expires  TIMESTAMP(3),
        seller  BIGINT,
        category  BIGINT,
        extra  VARCHAR>,
    bid ROW<
        auction  BIGINT,
        bidder  BIGINT,
        price  BIGINT,
        channel  VARCHAR,
        url  VARCHAR,
        `dateTime`  TIMESTAMP(3),
        extra  VARCHAR>,
    `dateTime` AS
        CASE
            WHEN event_type = 0 THEN person.`dateTime`
            WHEN event_type = 1 THEN auction.`dateTime`
            ELSE bid.`dateTime`
        END,
    WATERMARK FOR `dateTime` AS `dateTime` - INTERVAL '4' SECOND
) WITH (
    'connector' = 'nexmark',
    'first-event.rate' = '1000',
    'next-event.rate' = '1000',
    'events.num' = '100000',
    'base-time' = '2026-01-01 00:00:00'
);
