SET 'table.exec.source.cdc-events-duplicate' = 'true';
SET 'parallelism.default' = '1';

  SET 'execution.checkpointing.intervall' = '1 s';
SHOW TABLES;
