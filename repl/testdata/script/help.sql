help;
