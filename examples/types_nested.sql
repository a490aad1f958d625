-- ROW, ARRAY and MAP columns, read from JSON lines (examples/data/people.json):
--
--   go run ./cmd/weir run examples/types_nested.sql
--
-- A field is person.name (person is a column, not a table), t.person.name
-- or `person`.`addr`.`city`; tags[1] is the first element (NULL out of
-- range), scores['q1'] the value of a key (NULL if none). A field of a
-- NULL ROW is NULL. print shows a ROW as (a, b), an ARRAY as [a, b], a
-- MAP as {k=v}.
SET 'parallelism.default' = '1';

CREATE TABLE people (
  id BIGINT,
  person ROW<name STRING, age INT, addr ROW<city STRING, zip STRING>>,
  tags ARRAY<STRING>,
  scores MAP<STRING, INT>
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/people.json',
  'format' = 'json'
);

DESCRIBE people;

CREATE TABLE cards (
  id BIGINT,
  name STRING,
  city STRING,
  first_tag STRING,
  n_tags INT,
  q1 INT,
  is_ops BOOLEAN,
  card ROW<name STRING, tags ARRAY<STRING>>,
  pair ARRAY<INT>
) WITH ('connector' = 'print');

INSERT INTO cards
SELECT id, person.name, people.person.addr.city, tags[1], CARDINALITY(tags), scores['q1'],
  ARRAY_CONTAINS(tags, 'ops'), ROW(person.name, tags), ARRAY[person.age, id]
FROM people;

-- Grouping by a field of a nested ROW.
CREATE TABLE by_city (city STRING, people BIGINT) WITH ('connector' = 'print');
INSERT INTO by_city SELECT `person`.`addr`.`city`, COUNT(*) FROM people GROUP BY `person`.`addr`.`city`;

-- ROWs order field by field (a NULL field lowest): by age, then name,
-- oldest first; Chen (41), Dee and Ann (34), Bob (27), then id 4, whose
-- person is NULL.
CREATE TABLE by_age (id BIGINT, age_name ROW<age INT, name STRING>) WITH ('connector' = 'print', 'print-identifier' = 'by_age');
INSERT INTO by_age SELECT id, (person.age, person.name) FROM people ORDER BY (person.age, person.name) DESC;

-- ROW and ARRAY columns in CSV (examples/data/shipments.csv), as Flink's
-- csv: a ROW's fields or an ARRAY's elements in one field separated by
-- 'csv.array-element-delimiter' (';' by default), a ';' inside an element
-- escaped as '\;'; an empty field is NULL. MAPs need json.
CREATE TABLE shipments (
  id BIGINT,
  dest ROW<city STRING, zip STRING>,
  items ARRAY<STRING>
) WITH (
  'connector' = 'filesystem',
  'path' = 'examples/data/shipments.csv',
  'format' = 'csv'
);
CREATE TABLE shipment_lines (id BIGINT, city STRING, n INT, second_item STRING) WITH ('connector' = 'print', 'print-identifier' = 'csv');
INSERT INTO shipment_lines SELECT id, dest.city, CARDINALITY(items), items[2] FROM shipments;
