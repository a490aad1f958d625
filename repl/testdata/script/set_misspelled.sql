SET 'table.exec.state.ttl' = '1 h';
SET 'parallelism.default' = '1';

  SET 'execution.checkpointing.intervall' = '1 s';
SHOW TABLES;
