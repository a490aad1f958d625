SET 'sql-client.execution.result-mode' = 'grid';
