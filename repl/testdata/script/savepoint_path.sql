SET 'execution.savepoint.path' = '/tmp/sp';
